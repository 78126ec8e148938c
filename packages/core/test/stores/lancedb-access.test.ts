/**
 * Access groups in the embedded store: both legs filter while they rank (so the top k is made of visible
 * chunks), the IDF stays the whole collection's as in Qdrant, groups can be rewritten without touching the
 * vectors, and a table made before groups existed is migrated (every old row public).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@lancedb/lancedb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import type { IndexedChunk } from '../../src/domain.ts';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { chunkTableSchema, toChunkRow } from '../../src/stores/lancedb-schema.ts';

let dataDir: string;
const stores: LanceDbStore[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-lancedb-access-'));
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

const LOCK = { model: 'test-model', dimension: 2 };

async function openStore(options: { create?: boolean } = {}): Promise<LanceDbStore> {
  const store = new LanceDbStore({ dataDir, collection: 'docs' });
  stores.push(store);
  await store.open(LOCK, options);
  return store;
}

function chunk(source: string, chunkIndex: number, text: string, groups: string[], dense: number[]): IndexedChunk {
  return { id: chunkId(source, chunkIndex), source, headingPath: '', chunkIndex, text, contentHash: `hash-${source}`, groups, dense, sparse: encodeDocument(text), ingestedAt: 'now' };
}

/**
 * 25 hr chunks that match "salary band review" best on both legs (dense [1, 0]), then 3 public and 3
 * support chunks that match it weakly (dense [0, 1]): without filtering inside the search, the 20
 * candidates of each leg would all be hr.
 */
function corpus(): IndexedChunk[] {
  const hr = Array.from({ length: 25 }, (_, n) => chunk('hr/pay.md', n, `salary band review ${n}: salary band review of the payroll`, ['hr'], [1, 0]));
  const open = Array.from({ length: 3 }, (_, n) => chunk('public/handbook.md', n, `the yearly review of the office plants ${n}`, [], [0, 1]));
  const support = Array.from({ length: 3 }, (_, n) => chunk('support/faq.md', n, `a refund review for ticket ${n}`, ['support'], [0.1, 1]));
  return [...hr, ...open, ...support];
}

const query = { sparse: encodeQuery('salary band review'), dense: [1, 0], limit: 5, prefetchLimit: 20 };
const sources = (hits: Array<{ source: string }>) => [...new Set(hits.map((hit) => hit.source))].sort();

describe('LanceDbStore with access groups', () => {
  it.each([
    ['sparse only', { ...query, dense: undefined }],
    ['hybrid', query],
  ])('%s: fills the top k with public chunks and those of the caller\'s groups, though hr ranks first', async (_, hybridOrSparse) => {
    const store = await openStore();
    await store.upsert(corpus());

    const support = await store.search({ ...hybridOrSparse, visibleGroups: ['support'] });
    expect(support).toHaveLength(5);
    expect(sources(support)).toEqual(['public/handbook.md', 'support/faq.md']);

    const anonymous = await store.search({ ...hybridOrSparse, visibleGroups: [] });
    expect(sources(anonymous)).toEqual(['public/handbook.md']);
    expect(anonymous).toHaveLength(3);

    const hr = await store.search({ ...hybridOrSparse, visibleGroups: ['hr'] });
    expect(sources(hr)).toEqual(['hr/pay.md']);
  });

  it('hybrid: filters the dense leg before its nearest-neighbour search, so visible chunks sharing no word with the query still come back', async () => {
    const store = await openStore();
    await store.upsert(corpus());
    // "payroll" is only in hr chunks: the sparse leg has nothing visible, the dense leg must find the rest.
    const hits = await store.search({ ...query, sparse: encodeQuery('payroll'), visibleGroups: ['support'] });
    expect(hits).toHaveLength(5);
    expect(sources(hits)).toEqual(['public/handbook.md', 'support/faq.md']);
  });

  it('scores the sparse leg with the IDF of the whole collection, hidden chunks included, as Qdrant does', async () => {
    const store = await openStore();
    await store.upsert(corpus());
    const sparseOnly = { sparse: encodeQuery('review'), limit: 40, prefetchLimit: 40 };
    const everything = await store.search({ ...sparseOnly, visibleGroups: ['hr', 'support'] });
    const publicOnly = await store.search({ ...sparseOnly, visibleGroups: [] });
    const scoreOf = (hits: typeof everything, id: string) => hits.find((hit) => hit.id === id)?.score;
    const publicId = chunkId('public/handbook.md', 0);
    expect(scoreOf(publicOnly, publicId)).toBe(scoreOf(everything, publicId));
    // 31 chunks, all holding "review": idf = ln((31 - 31 + 0.5) / (31 + 0.5) + 1), not the 3 public chunks' ln((3 - 3 + 0.5) / (3 + 0.5) + 1).
    const value = encodeDocument('the yearly review of the office plants 0');
    const reviewWeight = value.values[value.indices.indexOf(encodeQuery('review').indices[0]!)]!;
    expect(scoreOf(publicOnly, publicId)).toBeCloseTo(Math.log(0.5 / 31.5 + 1) * Math.fround(reviewWeight), 6);
  });

  it('rewrites a document\'s groups in one update, on disk, leaving its vectors and other documents alone', async () => {
    const store = await openStore();
    await store.upsert(corpus());
    await store.setGroups('hr/pay.md', ['hr', 'support']);

    const reader = await openStore();
    expect(sources(await reader.search({ ...query, visibleGroups: ['support'] }))).toEqual(['hr/pay.md']);
    const documents = new Map((await reader.listDocuments()).map((document) => [document.source, document.groups]));
    expect(documents).toEqual(new Map([['hr/pay.md', ['hr', 'support']], ['public/handbook.md', []], ['support/faq.md', ['support']]]));

    await store.setGroups('hr/pay.md', []);
    expect(sources(await store.search({ ...query, visibleGroups: [] }))).toEqual(['hr/pay.md']);
    expect(await store.count()).toBe(31);
  });

  it('never mistakes one group whose name holds a line break for the two groups it would join', async () => {
    const store = await openStore();
    const twoGroups = chunk('two.md', 0, 'quarterly budget', ['finance', 'hr'], [1, 0]);
    const oneGroup = chunk('one.md', 0, 'quarterly budget', ['finance\nhr'], [1, 0]);
    await store.upsert([twoGroups]);
    await store.upsert([oneGroup]);
    await store.saveSearchView();
    const budget = { sparse: encodeQuery('quarterly budget'), limit: 5, prefetchLimit: 5 };
    for (const searcher of [store, await openStore()]) {
      expect(sources(await searcher.search({ ...budget, visibleGroups: ['hr'] }))).toEqual(['two.md']);
      expect(sources(await searcher.search({ ...budget, visibleGroups: ['finance\nhr'] }))).toEqual(['one.md']);
      expect((await searcher.getChunks([oneGroup.id, twoGroups.id], ['finance'])).map((each) => each.source)).toEqual(['two.md']);
    }
  });

  it('reports no groups for a document whose chunks disagree (an update cut short), so the next sync rewrites them', async () => {
    const store = await openStore();
    await store.upsert([chunk('a.md', 0, 'one', ['hr'], [1, 0]), chunk('a.md', 1, 'two', [], [1, 0])]);
    const [document] = await store.listDocuments();
    expect(document?.groups).toBeUndefined();
  });
});

describe('a table made before access groups existed', () => {
  async function createOldTable(): Promise<void> {
    const connection = await connect(join(dataDir, 'lancedb'));
    const schema = chunkTableSchema(LOCK.dimension);
    const oldSchema = schema.select(schema.fields.map((field) => field.name).filter((name) => name !== 'groups'));
    const table = await connection.createEmptyTable('docs', oldSchema);
    const rows = corpus().map((indexed) => {
      const { groups: _dropped, ...row } = toChunkRow(indexed, true);
      return row;
    });
    await table.add(rows);
    table.close();
    connection.close();
  }

  it('gets the column on open, every old chunk public, and its groups can then be set', async () => {
    await createOldTable();
    const store = await openStore();
    expect(new Set((await store.listDocuments()).map((document) => JSON.stringify(document.groups)))).toEqual(new Set(['[]']));
    expect(sources(await store.search({ ...query, visibleGroups: [] }))).toEqual(['hr/pay.md']);

    await store.setGroups('hr/pay.md', ['hr']);
    expect(sources(await store.search({ ...query, visibleGroups: [] }))).toEqual(['public/handbook.md', 'support/faq.md']);
  });

  it('is left as it is by a dry run (create: false), which reads every chunk as public', async () => {
    await createOldTable();
    const dryRun = await openStore({ create: false });
    expect((await dryRun.listDocuments()).every((document) => document.groups?.length === 0)).toBe(true);
    expect(await dryRun.search({ ...query, visibleGroups: [] })).toHaveLength(5);
    const connection = await connect(join(dataDir, 'lancedb'));
    const table = await connection.openTable('docs');
    expect((await table.schema()).fields.map((field) => field.name)).not.toContain('groups');
    table.close();
    connection.close();
  });
});
