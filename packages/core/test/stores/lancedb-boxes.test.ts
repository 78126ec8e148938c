/**
 * Chunk boxes (Chunk.boxes: where a docling-converted chunk's items lie on its pages) in the embedded store:
 * written as a nullable JSON column, returned on search hits and passages by the writer, by a reader that
 * scans the table and by one that loads the saved search view; a table made before boxes opens and searches.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@lancedb/lancedb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import type { IndexedChunk, PageBox } from '../../src/domain.ts';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';

/** As docling gives them: docling_core's ProvenanceItem bbox (types/doc/base.py BoundingBox: l, t, r, b, coord_origin). */
const BOXES: PageBox[] = [
  { page: 2, l: 50, t: 100, r: 545, b: 140, origin: 'TOPLEFT' },
  { page: 3, l: 72.5, t: 700.25, r: 523, b: 650, origin: 'BOTTOMLEFT' },
];

let dataDir: string;
const stores: LanceDbStore[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-lancedb-boxes-'));
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function openStore(create = true): Promise<LanceDbStore> {
  const store = new LanceDbStore({ dataDir, collection: 'docs' });
  stores.push(store);
  await store.open(null, { create });
  return store;
}

function chunk(source: string, text: string, boxes?: PageBox[]): IndexedChunk {
  return {
    id: chunkId(source, 0),
    source,
    headingPath: '',
    chunkIndex: 0,
    text,
    contentHash: `hash-${source}`,
    groups: [],
    sparse: encodeDocument(text),
    ingestedAt: '2026-01-01T00:00:00.000Z',
    pages: boxes ? [2, 3] : undefined,
    boxes,
  };
}

async function boxesFound(store: LanceDbStore): Promise<Record<string, unknown>> {
  const hits = await store.search({ sparse: encodeQuery('heron pump bearings'), limit: 5, prefetchLimit: 10, visibleGroups: [] });
  return Object.fromEntries(hits.map((hit) => [hit.source, hit.boxes]));
}

describe('chunk boxes in LanceDB', () => {
  it('are returned with hits and passages by the writer, a scanning reader and a reader of the saved view', async () => {
    const writer = await openStore();
    await writer.upsert([chunk('manual.pdf', 'Grease the heron pump bearings.', BOXES), chunk('notes.md', 'The heron pump bearings squeak.')]);
    const expected = { 'manual.pdf': BOXES, 'notes.md': undefined };

    expect(await boxesFound(writer)).toEqual(expected);
    expect((await writer.getChunks([chunkId('manual.pdf', 0)], []))[0]?.boxes).toEqual(BOXES);
    // No saved view yet: the reader builds its view from the table's columns.
    expect(await boxesFound(await openStore(false))).toEqual(expected);
    await writer.saveSearchView();
    const savedViewReader = await openStore(false);
    expect(await boxesFound(savedViewReader)).toEqual(expected);
    expect((await savedViewReader.getChunks([chunkId('manual.pdf', 0)], []))[0]?.boxes).toEqual(BOXES);
  });

  it('a table made before boxes opens and searches without them, and a writer adds the column without re-chunking', async () => {
    const writer = await openStore();
    await writer.upsert([chunk('manual.pdf', 'Grease the heron pump bearings.', BOXES)]);
    await writer.close();
    const table = await (await connect(join(dataDir, 'lancedb'))).openTable('docs');
    await table.dropColumns(['boxes']);
    table.close();

    // A reader (a server, a dry run) opens it as it is: no column added.
    const reader = await openStore(false);
    expect(await boxesFound(reader)).toEqual({ 'manual.pdf': undefined });
    expect((await reader.listDocuments()).map((document) => [document.source, document.pagesRecorded])).toEqual([['manual.pdf', true]]);
    const oldTable = await (await connect(join(dataDir, 'lancedb'))).openTable('docs');
    expect((await oldTable.schema()).fields.map((field) => field.name)).not.toContain('boxes');
    oldTable.close();

    // A writer adds it, null on every row: boxes unknown, the document still whole (its pages recorded).
    const upgraded = await openStore();
    expect(await boxesFound(upgraded)).toEqual({ 'manual.pdf': undefined });
    expect((await upgraded.listDocuments())[0]?.pagesRecorded).toBe(true);
    await upgraded.upsert([chunk('manual.pdf', 'Grease the heron pump bearings.', BOXES)]);
    expect(await boxesFound(upgraded)).toEqual({ 'manual.pdf': BOXES });
  });
});
