/**
 * The search view an ingest run saves beside the table (LanceDbStore.saveSearchView) and a server's
 * store loads at start instead of scanning the table: same hits, used only for the table version it
 * was saved for, and ignored when it is not a readable file.
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import type { IndexedChunk } from '../../src/domain.ts';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';

let dataDir: string;
const stores: LanceDbStore[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-saved-view-'));
});

afterEach(async () => {
  vi.restoreAllMocks();
  for (const store of stores.splice(0)) await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

const viewFile = () => join(dataDir, 'lancedb', 'docs.search-view');

async function openStore(): Promise<LanceDbStore> {
  const store = new LanceDbStore({ dataDir, collection: 'docs' });
  stores.push(store);
  await store.open(null);
  return store;
}

function chunk(source: string, chunkIndex: number, text: string, groups: string[] = [], headingPath = ''): IndexedChunk {
  return {
    id: chunkId(source, chunkIndex),
    source,
    headingPath,
    chunkIndex,
    text,
    contentHash: `hash-${source}`,
    sourceVersion: 'v1',
    groups,
    sparse: encodeDocument(text),
    ingestedAt: '2026-01-01T00:00:00.000Z',
  };
}

const CHUNKS = [
  chunk('guide.md', 0, 'Rollback a sync wave with argocd app rollback', [], 'Guide > Rollback'),
  chunk('guide.md', 1, 'Sync waves order the resources of an application: wave −1 before wave 0', [], 'Guide > Sync waves'),
  chunk('ops/secrets.md', 0, 'Rotate the sync token every 90 days; données sensibles 🔐', ['ops'], 'Secrets'),
  chunk('notes.md', 3, 'An unrelated note about lunch', [], ''),
];

/** A store holding CHUNKS with its view saved, as an ingest run leaves them. */
async function writerWithSavedView(): Promise<LanceDbStore> {
  const writer = await openStore();
  await writer.upsert(CHUNKS);
  await writer.saveSearchView();
  return writer;
}

/** A public sparse query. */
function lookup(text: string, limit: number) {
  return { sparse: encodeQuery(text), limit, prefetchLimit: 10, visibleGroups: [] };
}

/** Every query in every caller's eyes, with scores, texts and headings: what a view must reproduce. */
async function answers(store: LanceDbStore): Promise<unknown[]> {
  const results: unknown[] = [];
  for (const query of ['sync wave rollback', 'rotate token', 'lunch', 'nothing matches this']) {
    for (const visibleGroups of [[], ['ops']]) {
      results.push(await store.search({ sparse: encodeQuery(query), limit: 3, prefetchLimit: 10, visibleGroups }));
    }
  }
  results.push(await store.getChunks(CHUNKS.map((each) => each.id), ['ops']), await store.getChunks(CHUNKS.map((each) => each.id), []));
  return results;
}

describe('a saved search view', () => {
  it('answers exactly as the view scanned from the table: ranks, scores, texts, headings and groups', async () => {
    const writer = await openStore();
    await writer.upsert(CHUNKS);
    expect(await writer.saveSearchView()).toMatch(/search view saved for table version \d+/);
    const fromFile = await answers(await openStore());
    await rm(viewFile());
    const scanned = await answers(await openStore());
    expect(fromFile).toEqual(scanned);
    expect(JSON.stringify(scanned)).toContain('données sensibles 🔐');
  });

  it('keeps every chunk with its own payload when the save clusters near-duplicates into other slots', async () => {
    // Copy-major, as a corpus copied into folders is ingested: the save moves each document's copies together.
    const topics = ['Rollback a sync wave with argocd app rollback and history', 'Rotate the repository credentials token every ninety days', 'Prune orphaned resources after the application sync finishes'];
    const copies = Array.from({ length: 6 }, (_, copy) => topics.map((topic, doc) => chunk(`copy-${copy}/doc-${doc}.md`, 0, `${topic} folder${copy}`)));
    const writer = await openStore();
    await writer.upsert(copies.flat());
    await writer.saveSearchView();
    const reader = await openStore();
    for (const query of ['sync wave rollback', 'rotate credentials token', 'prune orphaned resources', 'folder3 rollback']) {
      const hits = await reader.search(lookup(query, 8));
      expect(hits.length).toBeGreaterThan(0);
      for (const hit of hits) {
        const [, copy, doc] = /^copy-(\d)\/doc-(\d)\.md$/.exec(hit.source)!;
        expect(hit.id).toBe(chunkId(hit.source, 0));
        expect(hit.text).toBe(`${topics[Number(doc)]} folder${copy}`);
      }
    }
    expect((await reader.search(lookup('folder3 rollback', 1)))[0]?.source).toBe('copy-3/doc-0.md');
    const fromFile = await answers(reader);
    await rm(viewFile());
    expect(fromFile).toEqual(await answers(await openStore()));
  });

  it('is what a reader loads: a change made to the file alone shows in the hits', async () => {
    await writerWithSavedView();
    const bytes = await readFile(viewFile());
    const at = bytes.indexOf('An unrelated note about lunch');
    bytes.write('An UNRELATED note about lunch', at, 'utf8');
    await writeFile(viewFile(), bytes);
    const [hit] = await (await openStore()).search(lookup('lunch', 1));
    expect(hit?.text).toBe('An UNRELATED note about lunch');
  });

  it('is not used once the table has moved on: a write after the save is seen', async () => {
    const writer = await writerWithSavedView();
    await writer.upsert([chunk('new.md', 0, 'Blue green deployments with Argo Rollouts')]);
    const [hit] = await (await openStore()).search(lookup('blue green rollouts', 1));
    expect(hit?.source).toBe('new.md');
  });

  it('is ignored when it is not a readable view: the reader scans the table', async () => {
    const writer = await writerWithSavedView();
    const expected = await answers(writer);
    await writeFile(viewFile(), 'RAGSECT1 but then garbage');
    expect(await answers(await openStore())).toEqual(expected);
  });

  it('goes with its table: a table made again under the same name never serves the old view, same version or not', async () => {
    const first = await openStore();
    await first.upsert(CHUNKS);
    await first.saveSearchView();
    await first.close();
    await rm(join(dataDir, 'lancedb', 'docs.lance'), { recursive: true });
    const again = await openStore();
    // Created, then one upsert: the same table version the first table had when its view was saved.
    await again.upsert([chunk('other.md', 0, 'A lunch menu for the new table')]);
    await again.saveSearchView();
    const hits = await (await openStore()).search(lookup('lunch', 3));
    expect(hits.map((hit) => hit.source)).toEqual(['other.md']);
  });

  it('is saved again only when the table changed', async () => {
    const writer = await writerWithSavedView();
    const before = (await stat(viewFile())).mtimeMs;
    expect(await writer.saveSearchView()).toBeUndefined();
    expect((await stat(viewFile())).mtimeMs).toBe(before);
    await writer.deleteBySource('notes.md');
    expect(await writer.saveSearchView()).toBeDefined();
    const hits = await (await openStore()).search(lookup('lunch', 3));
    expect(hits).toEqual([]);
  });
});
