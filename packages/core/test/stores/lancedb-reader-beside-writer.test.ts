/**
 * A reader's store (a server) beside a writer's (an ingest run) on the same embedded collection, sparse
 * only and hybrid: both legs of a query answer from the table version of the view the reader holds, a
 * running sync's intermediate versions never reach it, and a collection deleted and built again under the
 * same name replaces what it holds. The hybrid cases embed with the real (weak) Model2Vec test model.
 */
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@lancedb/lancedb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import type { IndexedChunk, SearchHit } from '../../src/domain.ts';
import { Model2VecEmbedder } from '../../src/embedders/model2vec.ts';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { LanceDbSearchView } from '../../src/stores/lancedb-search-view.ts';
import type { HybridQuery } from '../../src/stores/vector-store.ts';

const MODEL_DIR = fileURLToPath(new URL('../fixtures/models/model2vec-test-bge-base-vq', import.meta.url));
const embedder = new Model2VecEmbedder({ model: MODEL_DIR });

let dataDir: string;
const stores: LanceDbStore[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-beside-writer-'));
});

afterEach(async () => {
  vi.restoreAllMocks();
  for (const store of stores.splice(0)) await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

type Draft = Omit<IndexedChunk, 'dense'>;

function draft(source: string, chunkIndex: number, text: string, groups: string[] = []): Draft {
  return {
    id: chunkId(source, chunkIndex),
    source,
    headingPath: source,
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
  draft('guide.md', 0, 'Rollback a sync wave with argocd app rollback'),
  draft('guide.md', 1, 'Sync waves order the resources of an application: wave −1 before wave 0'),
  draft('ops/secrets.md', 0, 'Rotate the sync token every 90 days', ['ops']),
  draft('notes.md', 3, 'An unrelated note about lunch'),
];

const QUESTIONS = ['sync wave rollback', 'rotate token', 'lunch', 'nothing matches this'];

describe.each([
  { mode: 'sparse only', hybrid: false },
  { mode: 'hybrid', hybrid: true },
])('$mode', ({ hybrid }) => {
  async function openStore(): Promise<LanceDbStore> {
    const store = new LanceDbStore({ dataDir, collection: 'docs' });
    stores.push(store);
    await store.open(hybrid ? await embedder.describe() : null);
    return store;
  }

  /** The chunks as the ingest writes them: with their dense vectors when an embedder is configured. */
  async function indexed(drafts: Draft[]): Promise<IndexedChunk[]> {
    if (!hybrid) return drafts;
    const vectors = await embedder.embedDocuments(drafts.map((each) => each.text));
    return drafts.map((each, position) => ({ ...each, dense: vectors[position] }));
  }

  async function query(text: string, visibleGroups: string[] = []): Promise<HybridQuery> {
    const dense = hybrid ? await embedder.embedQuery(text) : undefined;
    return { sparse: encodeQuery(text), dense, limit: 3, prefetchLimit: 10, visibleGroups };
  }

  /** Every question in the eyes of a public caller and of `ops`, and what each may read: all a reader shows. */
  async function answers(store: LanceDbStore): Promise<unknown[]> {
    const results: unknown[] = [];
    for (const visibleGroups of [[], ['ops']]) {
      for (const text of QUESTIONS) results.push(await store.search(await query(text, visibleGroups)));
      results.push((await store.getChunks(CHUNKS.map((each) => each.id), visibleGroups)).map((each) => each.id).sort());
    }
    return results;
  }

  const sources = (hits: SearchHit[]) => hits.map((hit) => hit.source);

  describe('a reader beside a sync that marks itself as writing', () => {
    it('answers from the view it holds while the sync writes, both legs alike, then loads the view the sync saved', async () => {
      const writer = await openStore();
      await writer.upsert(await indexed(CHUNKS));
      const reader = await openStore();
      const before = await answers(reader);
      const scans = vi.spyOn(LanceDbSearchView, 'scan');

      const endWriting = await writer.markWriting();
      await writer.upsert(await indexed([draft('more.md', 0, 'Lunch is at noon on Fridays')]));
      await writer.upsert(await indexed([draft('more.md', 1, 'Lunch on Mondays is a picnic')]));
      expect(await answers(reader), 'mid-sync: the held view, on both legs').toEqual(before);

      await writer.saveSearchView();
      await endWriting();
      const lunch = await reader.search(await query('lunch'));
      expect(sources(lunch).filter((source) => source === 'more.md')).toHaveLength(2);
      expect(scans).toHaveBeenCalledTimes(1); // the writer's save; the reader read the saved file
    });

    it('shows a document deleted or restricted mid-run until the run ends, on both legs, and on neither after', async () => {
      const writer = await openStore();
      await writer.upsert(await indexed(CHUNKS));
      const reader = await openStore();
      const before = await answers(reader);

      const endWriting = await writer.markWriting();
      await writer.deleteBySource('guide.md');
      await writer.setGroups('notes.md', ['hr']);
      expect(await answers(reader), 'mid-sync: the held view, on both legs').toEqual(before);

      await writer.saveSearchView();
      await endWriting();
      for (const text of QUESTIONS) {
        const shown = sources(await reader.search(await query(text)));
        expect(shown).not.toContain('guide.md');
        expect(shown).not.toContain('notes.md');
      }
      expect(sources(await reader.search(await query('lunch', ['hr'])))).toContain('notes.md');
    });

    it('answers every query while a sync writes batch after batch, with the hits it answered before', async () => {
      const writer = await openStore();
      await writer.upsert(await indexed(CHUNKS));
      const reader = await openStore();
      const questions = await Promise.all(QUESTIONS.map((text) => query(text)));
      const expected = await Promise.all(questions.map((each) => reader.search(each)));

      const endWriting = await writer.markWriting();
      const batches = Array.from({ length: 12 }, (_, batch) => [draft(`batch-${batch}.md`, 0, `Sync wave ${batch}: rollback, lunch and token rotation`)]);
      let syncing = true;
      const sync = (async () => {
        for (const batch of batches) await writer.upsert(await indexed(batch));
        await writer.setGroups('notes.md', ['hr']);
        await writer.deleteBySource('guide.md');
        syncing = false;
      })();
      const outcomes: { ok: boolean; same: boolean }[] = [];
      while (syncing || outcomes.length < 40) {
        const position = outcomes.length % questions.length;
        await reader.search(questions[position]!).then(
          (hits) => outcomes.push({ ok: true, same: JSON.stringify(hits) === JSON.stringify(expected[position]) }),
          () => outcomes.push({ ok: false, same: false }),
        );
      }
      await sync;
      await endWriting();
      console.log(`${hybrid ? 'hybrid' : 'sparse'} reader beside a sync: ${outcomes.length} queries, ${outcomes.filter((each) => !each.ok).length} errors`);
      expect(outcomes.filter((each) => !each.ok)).toEqual([]);
      expect(outcomes.every((each) => each.same)).toBe(true);
    });

    it('keeps to the chunks of the view it holds when that version was cleaned up meanwhile', async () => {
      const writer = await openStore();
      await writer.upsert(await indexed(CHUNKS));
      const reader = await openStore();
      await reader.search(await query('lunch'));

      const endWriting = await writer.markWriting();
      await writer.upsert(await indexed([draft('more.md', 0, 'Lunch is at noon on Fridays')]));
      // What compaction does to the versions of a run longer than the hour it keeps (LanceDbStore.compact;
      // cleanupOlderThan and deleteUnverified as documented in @lancedb/lancedb/dist/table.d.ts, OptimizeOptions).
      const table = await (await connect(join(dataDir, 'lancedb'))).openTable('docs');
      await table.optimize({ cleanupOlderThan: new Date(Date.now() + 1000), deleteUnverified: true });
      table.close();

      for (const text of QUESTIONS) {
        const hits = await reader.search(await query(text));
        expect(sources(hits)).not.toContain('more.md');
      }
      await endWriting();
    });

    it('ignores a mark left by a sync that died: not refreshed for 30 s', async () => {
      const writer = await openStore();
      await writer.upsert(await indexed(CHUNKS));
      const reader = await openStore();
      await reader.search(await query('lunch'));
      const mark = join(dataDir, 'lancedb', 'docs.writing');
      await writeFile(mark, '{}');
      const longAgo = new Date(Date.now() - 31_000);
      await utimes(mark, longAgo, longAgo);
      await writer.upsert(await indexed([draft('more.md', 0, 'Lunch is at noon on Fridays')]));
      expect(sources(await reader.search(await query('lunch')))).toContain('more.md');
    });
  });

  describe('a reader beside a writer that saves no view', () => {
    it('scans the table once for concurrent queries, and once more after another handle writes', async () => {
      const writer = await openStore();
      await writer.upsert(await indexed(CHUNKS));
      const reader = await openStore();
      const scans = vi.spyOn(LanceDbSearchView, 'scan');
      const lunch = await query('lunch');

      const first = await Promise.all(Array.from({ length: 5 }, () => reader.search({ ...lunch, limit: 1 })));
      expect(scans).toHaveBeenCalledTimes(1);
      expect(first.map(([hit]) => hit?.source)).toEqual(Array(5).fill('notes.md'));

      await writer.upsert(await indexed([draft('more.md', 0, 'Lunch is at noon on Fridays')]));
      const second = await Promise.all(Array.from({ length: 5 }, () => reader.search({ ...lunch, limit: 2 })));
      expect(scans).toHaveBeenCalledTimes(2);
      expect(second.every((hits) => sources(hits).includes('more.md'))).toBe(true);
    });
  });

  describe('a reader of a collection deleted and built again under the same name', () => {
    /** A reader holding the view of CHUNKS written one by one: the table is at a version the rebuild does not reach. */
    async function readerOfManyVersions(): Promise<{ writer: LanceDbStore; reader: LanceDbStore }> {
      const writer = await openStore();
      for (const each of CHUNKS) await writer.upsert(await indexed([each]));
      await writer.saveSearchView();
      const reader = await openStore();
      expect(sources(await reader.search(await query('lunch')))).toContain('notes.md');
      return { writer, reader };
    }

    async function deleteCollection(writer: LanceDbStore): Promise<void> {
      await writer.close();
      await rm(join(dataDir, 'lancedb', 'docs.lance'), { recursive: true });
    }

    const REBUILT = [draft('notes.md', 3, 'The rebuilt note: lunch moved to the canteen'), draft('ops/secrets.md', 0, 'Tokens now rotate every 30 days')];

    /** The lunch note of the new table first (the only sparse match), and nothing of the old table. */
    function expectOnlyRebuilt(hits: SearchHit[]): void {
      expect(hits.map((hit) => hit.text)).toContain(REBUILT[0]!.text);
      const rebuiltTexts = REBUILT.map((each) => each.text);
      expect(hits.filter((hit) => !rebuiltTexts.includes(hit.text))).toEqual([]);
    }

    it('serves the new table, with fewer versions than the one it held: old texts and old groups gone', async () => {
      const { writer, reader } = await readerOfManyVersions();
      await deleteCollection(writer);
      const rebuilder = await openStore();
      await rebuilder.upsert(await indexed(REBUILT));
      await rebuilder.saveSearchView();

      expectOnlyRebuilt(await reader.search(await query('lunch')));
      // The secrets were restricted to ops in the old table and are public in the new one.
      expect((await reader.getChunks([REBUILT[1]!.id], [])).map((each) => each.text)).toEqual([REBUILT[1]!.text]);
    });

    it('serves the new table when it reaches exactly the version of the view held', async () => {
      const writer = await openStore();
      await writer.upsert(await indexed(CHUNKS));
      await writer.saveSearchView();
      const reader = await openStore();
      await reader.search(await query('lunch'));
      await deleteCollection(writer);
      const rebuilder = await openStore();
      // Created, then one upsert: the version the first table had when the reader loaded it.
      await rebuilder.upsert(await indexed(REBUILT.slice(0, 1)));

      expectOnlyRebuilt(await reader.search(await query('lunch')));
    });

    it('stops serving the deleted table at once, even while the rebuilding sync marks itself as writing', async () => {
      const writer = await openStore();
      await writer.upsert(await indexed(CHUNKS));
      const reader = await openStore();
      await reader.search(await query('lunch'));
      await deleteCollection(writer);
      const rebuilder = await openStore();
      const endWriting = await rebuilder.markWriting();
      // More versions than the table the reader holds: a mid-sync version of that table would look the same.
      for (const each of [...REBUILT, REBUILT[0]!]) await rebuilder.upsert(await indexed([each]));

      expectOnlyRebuilt(await reader.search(await query('lunch')));
      const readable = await reader.getChunks(CHUNKS.map((each) => each.id), ['ops']);
      expect(readable.map((each) => each.text).sort()).toEqual(REBUILT.map((each) => each.text).sort());
      await endWriting();
    });

    it('serves the new table of a collection without a recorded id (made before ids) once its version went down', async () => {
      const writer = await openStore();
      for (const each of CHUNKS) await writer.upsert(await indexed([each]));
      await forgetTableId();
      const reader = new LanceDbStore({ dataDir, collection: 'docs' });
      stores.push(reader);
      await reader.open(hybrid ? await embedder.describe() : null, { create: false });
      await reader.search(await query('lunch'));
      await deleteCollection(writer);
      const rebuilder = await openStore();
      await rebuilder.upsert(await indexed(REBUILT.slice(0, 1)));
      await forgetTableId();

      expectOnlyRebuilt(await reader.search(await query('lunch')));
    });
  });
});

/** Leaves the collection's record as releases before table ids wrote it. */
async function forgetTableId(): Promise<void> {
  const file = join(dataDir, 'lancedb', 'docs.model.json');
  const { tableId: _forgotten, ...recorded } = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  await writeFile(file, JSON.stringify(recorded));
}
