/**
 * QdrantStore against a real Qdrant: the one test that proves the request shapes the fake server
 * asserts are what Qdrant accepts, and that its RRF scores as DESIGN.md says.
 *
 * Where Qdrant comes from, in order:
 * 1. QDRANT_URL (and QDRANT_API_KEY when the server needs one), e.g. `docker run -p 6333:6333 qdrant/qdrant:v1.17.0`;
 * 2. a container started by testcontainers, when a Docker or Podman socket is found;
 * 3. otherwise the suite is skipped, saying why. The check only looks for environment variables
 *    and socket files, so skipping costs nothing.
 */
import { randomUUID } from 'node:crypto';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexedChunk } from '../../src/domain.ts';
import { RagError } from '../../src/errors.ts';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import { realQdrantSkipReason, startRealQdrant, type RealQdrant } from './real-qdrant.ts';

const skipReason = realQdrantSkipReason('qdrant-real.test.ts');
if (skipReason) console.warn(skipReason);

function chunk(source: string, chunkIndex: number, dense: number[], indices: number[], groups: string[] = []): IndexedChunk {
  return {
    id: randomUUID(),
    source,
    headingPath: 'Guide',
    chunkIndex,
    text: `${source} > Guide\n\nchunk ${chunkIndex}`,
    contentHash: `hash-of-${source}`,
    sourceVersion: undefined,
    groups,
    ingestedAt: new Date().toISOString(),
    dense,
    sparse: { indices, values: indices.map(() => 1) },
  };
}

describe.skipIf(skipReason !== undefined)('QdrantStore against a real Qdrant', () => {
  const collection = `rag-test-${randomUUID()}`;
  let qdrant: RealQdrant | undefined;
  let store: QdrantStore;

  beforeAll(async () => {
    qdrant = await startRealQdrant();
    store = new QdrantStore({ url: qdrant.url, apiKey: qdrant.apiKey, collection, minBackoffMs: 50 });
  }, 180_000);

  afterAll(async () => {
    if (qdrant) await new QdrantClient({ url: qdrant.url, apiKey: qdrant.apiKey, checkCompatibility: false }).deleteCollection(collection).catch(() => undefined);
    await qdrant?.stop();
  });

  const lock = { model: 'test-model', dimension: 4 };
  const first = chunk('a.md', 0, [1, 0, 0, 0], [101, 102]);
  const second = chunk('a.md', 1, [0, 1, 0, 0], [102, 103]);
  const third = chunk('b.md', 0, [0, 0, 1, 0], [104]);

  it('creates the collection, then reopens it with the same model and refuses another', async () => {
    await expect(store.checkReady()).rejects.toMatchObject({ code: 'RAG_STORE_NOT_READY' });
    await store.open(lock);
    await store.open(lock);
    await store.checkReady();
    const other = store.open({ model: 'other-model', dimension: 4 });
    await expect(other).rejects.toBeInstanceOf(RagError);
    await expect(other).rejects.toMatchObject({ code: 'RAG_MODEL_MISMATCH' });
    await expect(store.open({ model: 'test-model', dimension: 8 })).rejects.toMatchObject({ code: 'RAG_MODEL_MISMATCH' });
  });

  it('upserts, counts and lists documents', async () => {
    await store.upsert([first, second, third]);
    expect(await store.count()).toBe(3);
    const documents = await store.listDocuments();
    const a = documents.find((d) => d.source === 'a.md');
    expect(a?.contentHash).toBe('hash-of-a.md');
    expect(a?.chunkIds.sort()).toEqual([first.id, second.id].sort());
  });

  it('fuses dense and sparse with RRF: first in both legs scores 1/(0+2) + 1/(0+2) = 1', async () => {
    const hits = await store.search({ dense: [0.9, 0.1, 0, 0], sparse: { indices: [101], values: [1] }, limit: 3, prefetchLimit: 10, visibleGroups: [] });
    expect(hits[0]?.id).toBe(first.id);
    expect(hits[0]?.score).toBeCloseTo(1, 5);
    expect(hits[0]).toMatchObject({ source: 'a.md', headingPath: 'Guide', chunkIndex: 0, text: first.text });
  });

  it('searches sparse only', async () => {
    const hits = await store.search({ sparse: { indices: [104], values: [1] }, limit: 3, prefetchLimit: 10, visibleGroups: [] });
    expect(hits.map((h) => h.id)).toEqual([third.id]);
  });

  it('deletes by source and by ids', async () => {
    await store.deleteBySource('a.md');
    expect(await store.count()).toBe(1);
    await store.deleteByIds([third.id]);
    expect(await store.count()).toBe(0);
  });

  describe('access groups', () => {
    // Term 201 is in every point; the hr points match the query best on both legs, shared.md next (no ties).
    const hr1 = chunk('hr/pay.md', 0, [1, 0, 0, 0], [201, 202], ['hr']);
    const hr2 = chunk('hr/pay.md', 1, [0.99, 0.01, 0, 0], [201, 202], ['hr']);
    const support = chunk('support/faq.md', 0, [0.5, 0.5, 0, 0], [201, 203], ['support']);
    const both = chunk('shared.md', 0, [0.4, 0.6, 0, 0], [201, 202, 204], ['hr', 'support']);
    const open = chunk('public.md', 0, [0.3, 0.7, 0, 0], [201, 205]);
    const sparseQuery = { sparse: { indices: [201, 202], values: [1, 1] }, limit: 3, prefetchLimit: 10 };
    const hybridQuery = { ...sparseQuery, dense: [1, 0, 0, 0] };
    const sources = (hits: Array<{ source: string }>) => hits.map((hit) => hit.source).sort();

    it('indexes `groups` as a keyword, also on a collection created before groups existed', async () => {
      const client = new QdrantClient({ url: qdrant!.url, apiKey: qdrant!.apiKey, checkCompatibility: false });
      await client.deletePayloadIndex(collection, 'groups', { wait: true });
      expect((await client.getCollection(collection)).payload_schema.groups).toBeUndefined();
      await new QdrantStore({ url: qdrant!.url, apiKey: qdrant!.apiKey, collection }).open(lock);
      expect((await client.getCollection(collection)).payload_schema.groups?.data_type).toBe('keyword');
    });

    it('returns public points and those of the caller\'s groups, filling the limit with them, in every prefetch', async () => {
      await store.upsert([hr1, hr2, support, both, open]);
      for (const query of [sparseQuery, hybridQuery]) {
        expect(sources(await store.search({ ...query, visibleGroups: ['support'] }))).toEqual(['public.md', 'shared.md', 'support/faq.md']);
        expect(sources(await store.search({ ...query, visibleGroups: [] }))).toEqual(['public.md']);
        expect(sources(await store.search({ ...query, visibleGroups: ['hr'] }))).toEqual(['hr/pay.md', 'hr/pay.md', 'shared.md']);
      }
    });

    it('treats a point without a `groups` key (written before groups existed) as public', async () => {
      const client = new QdrantClient({ url: qdrant!.url, apiKey: qdrant!.apiKey, checkCompatibility: false });
      await client.deletePayload(collection, { wait: true, keys: ['groups'], points: [open.id] });
      expect(sources(await store.search({ ...sparseQuery, visibleGroups: [] }))).toEqual(['public.md']);
    });

    it('scores with the IDF of the whole collection, whatever the filter', async () => {
      const unfiltered = await store.search({ ...sparseQuery, limit: 10, visibleGroups: ['hr', 'support'] });
      const filtered = await store.search({ ...sparseQuery, visibleGroups: [] });
      expect(filtered[0]?.score).toBeCloseTo(unfiltered.find((hit) => hit.source === 'public.md')!.score, 5);
    });

    it('rewrites the groups of a document\'s points without touching their vectors', async () => {
      await store.setGroups('hr/pay.md', []);
      expect(sources(await store.search({ ...hybridQuery, visibleGroups: [] }))).toEqual(['hr/pay.md', 'hr/pay.md', 'public.md']);
      const listed = (await store.listDocuments()).find((document) => document.source === 'hr/pay.md');
      expect(listed?.groups).toEqual([]);
      await store.setGroups('hr/pay.md', ['hr']);
      expect((await store.listDocuments()).find((document) => document.source === 'hr/pay.md')?.groups).toEqual(['hr']);
    });
  });
});
