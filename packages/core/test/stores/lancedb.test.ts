import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import type { IndexedChunk } from '../../src/domain.ts';
import { RagError } from '../../src/errors.ts';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';

let dataDir: string;
const stores: LanceDbStore[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-lancedb-'));
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function openStore(lock: { model: string; dimension: number } | null, collection = 'docs'): Promise<LanceDbStore> {
  const store = new LanceDbStore({ dataDir, collection });
  stores.push(store);
  await store.open(lock);
  return store;
}

function chunk(source: string, chunkIndex: number, text: string, dense?: number[]): IndexedChunk {
  return {
    id: chunkId(source, chunkIndex),
    source,
    headingPath: '',
    chunkIndex,
    text,
    contentHash: `hash-${source}`,
    sourceVersion: 'v1',
    groups: [],
    dense,
    sparse: encodeDocument(text),
    ingestedAt: '2026-01-01T00:00:00.000Z',
  };
}

describe('LanceDbStore', () => {
  it('stores chunks, lists documents with their chunk ids, and deletes by id and by source', async () => {
    const store = await openStore(null);
    await store.upsert([chunk('a.md', 0, 'alpha backups'), chunk('a.md', 1, 'alpha restore'), chunk('b.md', 0, 'beta alerts')]);
    expect(await store.count()).toBe(3);
    const documents = (await store.listDocuments()).sort((x, y) => x.source.localeCompare(y.source));
    expect(documents.map((document) => [document.source, document.chunkIds.length, document.contentHash])).toEqual([
      ['a.md', 2, 'hash-a.md'],
      ['b.md', 1, 'hash-b.md'],
    ]);
    await store.deleteByIds([chunkId('a.md', 1)]);
    expect(await store.count()).toBe(2);
    await store.deleteBySource('b.md');
    expect((await store.listDocuments()).map((document) => document.source)).toEqual(['a.md']);
  });

  it('a source filter is applied inside the dense leg: its top k are the k nearest within the filter, not the k nearest cut afterwards', async () => {
    const store = await openStore({ model: 'm', dimension: 2 });
    // Twenty chunks right on the query vector outside the filter, three far from it inside; no text matches
    // the query's terms, so only the dense leg can answer.
    const outside = Array.from({ length: 20 }, (_, index) => chunk(`near/${index}.md`, 0, `nearby note ${index}`, [1, 0]));
    const inside = [0, 1, 2].map((index) => chunk('far.md', index, `distant entry ${index}`, [0.1 * index, 1]));
    await store.upsert([...outside, ...inside]);
    const hits = await store.search({ dense: [1, 0], sparse: encodeQuery('zebra'), limit: 3, prefetchLimit: 5, visibleGroups: [], filter: { source: 'far.md' } });
    expect(hits.map((hit) => hit.chunkIndex).sort()).toEqual([0, 1, 2]);
    expect(new Set(hits.map((hit) => hit.source))).toEqual(new Set(['far.md']));
  });

  it('upserting the same ids twice keeps one point each', async () => {
    const store = await openStore(null);
    await store.upsert([chunk('a.md', 0, 'first version')]);
    await store.upsert([chunk('a.md', 0, 'second version')]);
    expect(await store.count()).toBe(1);
    const [hit] = await store.search({ sparse: encodeQuery('second version'), limit: 5, prefetchLimit: 20, visibleGroups: [] });
    expect(hit?.text).toBe('second version');
  });

  it('ranks sparse-only queries by IDF-weighted BM25 and returns only matching chunks', async () => {
    const store = await openStore(null);
    await store.upsert([chunk('a.md', 0, 'snapshot retention policy'), chunk('b.md', 0, 'alert paging policy'), chunk('c.md', 0, 'unrelated words')]);
    const hits = await store.search({ sparse: encodeQuery('snapshot policy'), limit: 5, prefetchLimit: 20, visibleGroups: [] });
    expect(hits.map((hit) => hit.source)).toEqual(['a.md', 'b.md']);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('fuses dense and sparse rankings with RRF (k = 2)', async () => {
    const store = await openStore({ model: 'toy', dimension: 2 });
    await store.upsert([chunk('a.md', 0, 'snapshot retention', [1, 0]), chunk('b.md', 0, 'paging', [0, 1])]);
    const hits = await store.search({ dense: [0.9, 0.1], sparse: encodeQuery('snapshot'), limit: 2, prefetchLimit: 20, visibleGroups: [] });
    // a.md is first in both legs: 1/2 + 1/2; b.md is second in the dense leg only: 1/3.
    expect(hits.map((hit) => [hit.source, hit.score])).toEqual([
      ['a.md', 1],
      ['b.md', Math.fround(1 / 3)],
    ]);
  });

  it('sees writes made through another handle on the same folder (an ingest run beside the server)', async () => {
    const server = await openStore(null);
    const ingestJob = await openStore(null);
    await ingestJob.upsert([chunk('a.md', 0, 'freshly ingested text')]);
    const hits = await server.search({ sparse: encodeQuery('freshly ingested'), limit: 5, prefetchLimit: 20, visibleGroups: [] });
    expect(hits.map((hit) => hit.source)).toEqual(['a.md']);
  });

  it('refuses to open a collection with another embedding model, naming both and the fix', async () => {
    const first = await openStore({ model: 'model-a', dimension: 2 });
    await first.upsert([chunk('a.md', 0, 'text', [1, 0])]);
    const error = await openStore({ model: 'model-b', dimension: 3 }).catch((caught: unknown) => caught as RagError);
    expect(error).toBeInstanceOf(RagError);
    expect((error as RagError).code).toBe('RAG_MODEL_MISMATCH');
    expect((error as RagError).message).toContain('model-a (2 dimensions)');
    expect((error as RagError).message).toContain('model-b (3 dimensions)');
    expect((error as RagError).message).toContain('docs-v3');
  });

  it('lets a sparse-only process read a dense collection but not write to it', async () => {
    const dense = await openStore({ model: 'model-a', dimension: 2 });
    await dense.upsert([chunk('a.md', 0, 'retention text', [1, 0])]);
    const sparseOnly = await openStore(null);
    expect((await sparseOnly.search({ sparse: encodeQuery('retention'), limit: 1, prefetchLimit: 20, visibleGroups: [] }))[0]?.source).toBe('a.md');
    await expect(sparseOnly.upsert([chunk('b.md', 0, 'no dense vector')])).rejects.toMatchObject({ code: 'RAG_MODEL_MISMATCH' });
  });

  it('refuses a dense model on a collection built sparse only', async () => {
    await openStore(null);
    await expect(openStore({ model: 'model-a', dimension: 2 })).rejects.toMatchObject({ code: 'RAG_MODEL_MISMATCH' });
  });
});

describe('LanceDbStore readiness', () => {
  it('answers RAG_STORE_LOADING until the search view is in memory, then ready', async () => {
    const writer = await openStore(null);
    await writer.upsert([chunk('a.md', 0, 'alpha backups')]);
    const reader = await openStore(null);
    // A probe that cannot wait at all sees the view not loaded yet.
    await expect(reader.checkReady(AbortSignal.abort())).rejects.toMatchObject({ code: 'RAG_STORE_LOADING' });
    await reader.prepareForSearch();
    await expect(reader.checkReady(AbortSignal.abort())).resolves.toBeUndefined();
  });

  it('waits a moment for a view that loads quickly, so a small index is ready at the first probe', async () => {
    const writer = await openStore(null);
    await writer.upsert([chunk('a.md', 0, 'alpha backups')]);
    const reader = await openStore(null);
    await expect(reader.checkReady(AbortSignal.timeout(3000))).resolves.toBeUndefined();
  });
});

describe('LanceDbStore.compact', () => {
  it('merges the files left by many small writes and keeps every chunk searchable', async () => {
    const store = await openStore(null);
    for (let index = 0; index < 6; index++) await store.upsert([chunk(`doc-${index}.md`, 0, `retention policy number ${index}`)]);
    await store.deleteByIds([chunkId('doc-0.md', 0)]);
    const report = await store.compact();
    expect(report).toMatch(/^compacted [1-9]\d* fragments into 1, removed \d+ old versions; no dense column \(sparse only\)$/);
    expect(await store.count()).toBe(5);
    const hits = await store.search({ sparse: encodeQuery('retention policy'), limit: 10, prefetchLimit: 20, visibleGroups: [] });
    expect(hits.map((hit) => hit.source).sort()).toEqual(['doc-1.md', 'doc-2.md', 'doc-3.md', 'doc-4.md', 'doc-5.md']);
  });
});

describe('LanceDbStore.open, carefully', () => {
  it('never recreates a table whose model record went missing: every chunk stays', async () => {
    const first = await openStore({ model: 'model-a', dimension: 2 });
    await first.upsert([chunk('a.md', 0, 'kept text', [1, 0])]);
    await first.close();
    await rm(join(dataDir, 'lancedb', 'docs.model.json'));
    const reopened = await openStore({ model: 'model-a', dimension: 2 });
    expect(await reopened.count()).toBe(1);
    await expect(openStore({ model: 'model-b', dimension: 3 })).rejects.toMatchObject({ code: 'RAG_MODEL_MISMATCH' });
  });

  it('with create: false, leaves a missing collection missing and reads it as empty', async () => {
    const dryRun = new LanceDbStore({ dataDir, collection: 'absent' });
    stores.push(dryRun);
    await dryRun.open(null, { create: false });
    expect(await dryRun.listDocuments()).toEqual([]);
    expect(await dryRun.count()).toBe(0);
    await expect(dryRun.upsert([chunk('a.md', 0, 'text')])).rejects.toMatchObject({ code: 'RAG_STORE_NOT_READY' });
    expect(existsSync(join(dataDir, 'lancedb', 'absent.lance'))).toBe(false);
    expect(existsSync(join(dataDir, 'lancedb', 'absent.model.json'))).toBe(false);
  });
});
