/**
 * Search filters in the embedded store: both legs rank within the matching documents (so the top k is made of
 * matching chunks, not cut from an unfiltered top k), metadata is rewritten without touching the vectors,
 * and survives a reload (a table scan and a saved view); chunks without metadata match no filter on it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import type { IndexedChunk } from '../../src/domain.ts';
import type { DocumentMetadata } from '../../src/search-filter/document-metadata.ts';
import { toSearchFilter } from '../../src/search-filter/search-controls.ts';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';

let dataDir: string;
const stores: LanceDbStore[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-lancedb-filters-'));
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

const LOCK = { model: 'test-model', dimension: 2 };

async function openStore(): Promise<LanceDbStore> {
  const store = new LanceDbStore({ dataDir, collection: 'docs' });
  stores.push(store);
  await store.open(LOCK);
  return store;
}

const JAN = Date.parse('2026-01-15T00:00:00Z') / 1000;
const JUN = Date.parse('2026-06-15T00:00:00Z') / 1000;

function chunk(source: string, chunkIndex: number, text: string, dense: number[], metadata?: DocumentMetadata): IndexedChunk {
  return { id: chunkId(source, chunkIndex), source, headingPath: '', chunkIndex, text, contentHash: `hash-${source}`, groups: [], dense, sparse: encodeDocument(text), ingestedAt: 'now', metadata };
}

/** 25 chunks of one platform guide match best on both legs; a few weak matches of other types, teams and dates. */
function corpus(): IndexedChunk[] {
  const guide = Array.from({ length: 25 }, (_, n) => chunk('ops/guide.md', n, `rollback the deployment ${n}: rollback the deployment safely`, [1, 0], { type: 'md', modifiedAt: JAN, meta: { team: 'platform' } }));
  const pdf = Array.from({ length: 3 }, (_, n) => chunk('ops/runbook.pdf', n, `a deployment checklist ${n}`, [0, 1], { type: 'pdf', modifiedAt: JUN, meta: { team: 'sre', tier: 'gold' } }));
  const old = Array.from({ length: 3 }, (_, n) => chunk('legacy/notes.md', n, `deployment notes ${n}`, [0.1, 1]));
  return [...guide, ...pdf, ...old];
}

const query = { sparse: encodeQuery('rollback the deployment'), dense: [1, 0], limit: 5, prefetchLimit: 20, visibleGroups: [] };
const sources = (hits: Array<{ source: string }>) => [...new Set(hits.map((hit) => hit.source))].sort();

describe('LanceDbStore with search filters', () => {
  it.each([
    ['sparse only', { ...query, dense: undefined }],
    ['hybrid', query],
  ])('fills the top k with matching chunks (%s)', async (_, base) => {
    const store = await openStore();
    await store.upsert(corpus());
    const byType = await store.search({ ...base, filter: toSearchFilter({ type: 'pdf' }) });
    expect(byType).toHaveLength(3);
    expect(sources(byType)).toEqual(['ops/runbook.pdf']);
    expect(sources(await store.search({ ...base, filter: toSearchFilter({ source: 'ops/**', meta: { team: ['sre', 'x'] } }) }))).toEqual(['ops/runbook.pdf']);
    expect(sources(await store.search({ ...base, filter: toSearchFilter({ modified_before: '2026-03-01T00:00:00Z' }) }))).toEqual(['ops/guide.md']);
    expect(sources(await store.search({ ...base, limit: 40, filter: toSearchFilter({ source: '{legacy,ops}/*.{md,txt}' }) }))).toEqual(['legacy/notes.md', 'ops/guide.md']);
    expect(await store.search({ ...base, filter: toSearchFilter({ meta: { team: 'nobody' } }) })).toEqual([]);
  });

  it('reads no metadata as unknown: a field filter leaves the chunk out, a source glob does not', async () => {
    const store = await openStore();
    await store.upsert(corpus());
    expect(sources(await store.search({ ...query, limit: 40, filter: toSearchFilter({ modified_after: '2000-01-01T00:00:00Z' }) }))).toEqual(['ops/guide.md', 'ops/runbook.pdf']);
    expect(sources(await store.search({ ...query, filter: toSearchFilter({ source: 'legacy/**' }) }))).toEqual(['legacy/notes.md']);
  });

  it('rewrites a document metadata without re-embedding it, and keeps it across a reload', async () => {
    const store = await openStore();
    await store.upsert(corpus());
    await store.setMetadata('legacy/notes.md', { type: 'md', modifiedAt: JUN, meta: { team: 'sre' } });
    const sre = toSearchFilter({ meta: { team: 'sre' } });
    expect(sources(await store.search({ ...query, limit: 10, filter: sre }))).toEqual(['legacy/notes.md', 'ops/runbook.pdf']);
    const listed = (await store.listDocuments()).find((document) => document.source === 'legacy/notes.md');
    expect(listed?.metadata).toEqual({ type: 'md', modifiedAt: JUN, size: undefined, meta: { team: 'sre' } });
    // A second process scans the table; after saveSearchView a third reads the saved view.
    const scanned = await openStore();
    expect(sources(await scanned.search({ ...query, limit: 10, filter: sre }))).toEqual(['legacy/notes.md', 'ops/runbook.pdf']);
    await scanned.saveSearchView();
    const saved = await openStore();
    expect(sources(await saved.search({ ...query, limit: 10, filter: sre }))).toEqual(['legacy/notes.md', 'ops/runbook.pdf']);
  });
});
