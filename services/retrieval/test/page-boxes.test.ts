/**
 * Boxes on /search (docs/api.md, "Page numbers"): a PDF converted by docling-serve (a fake answering with
 * the committed answer docling-core itself made, packages/core/test/fixtures/pages/docling-answer.json)
 * is indexed with each chunk's boxes, its docling items' prov bboxes (checked item by item in
 * packages/core/test/ingest/docling-pages.test.ts); /search returns them as stored, a Markdown file none.
 * Qdrant stores them as a payload list returned with hits and passages.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, encodeQuery, ingest, QdrantStore, type PageBox } from '@rag/core';
import { ConverterRegistry, DoclingServeConverter, LocalDirectorySource, MarkdownPassthrough } from '@rag/core/ingestion';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakeServers, startFakeServer } from '../../../packages/core/test/adapters/fake-server.ts';
import { FakeDoclingServer } from '../../../packages/core/test/ingest/fake-docling-server.ts';
import { FakeQdrant } from './fakes/fake-qdrant.ts';
import { postJson, readJson, startTestStack, type TestStack } from './test-stack.ts';

const ANSWER = JSON.parse(await readFile(new URL('../../../packages/core/test/fixtures/pages/docling-answer.json', import.meta.url), 'utf8')) as unknown;

let folder: string;
let docling: FakeDoclingServer;
let stack: TestStack;
/** Each stored chunk's boxes, by `source#chunk_index`. */
const storedBoxes = new Map<string, readonly PageBox[] | undefined>();

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-page-boxes-'));
  await writeFile(join(folder, 'pump-station.pdf'), '%PDF-1.7 (converted by the fake docling-serve)');
  await writeFile(join(folder, 'plover-notes.md'), '# Plover notes\n\nThe heron pump bearings are greased by the night shift.\n');
  docling = await new FakeDoclingServer(() => ({ status: 200, body: ANSWER })).start();
  stack = await startTestStack({ folder, converters: [new DoclingServeConverter({ url: docling.baseUrl })] });
  for (const document of await stack.store.listDocuments()) {
    for (const chunk of await stack.store.getChunks(document.chunkIds, [])) storedBoxes.set(`${chunk.source}#${chunk.chunkIndex}`, chunk.boxes);
  }
});

afterAll(async () => {
  await stack?.close();
  await docling?.close();
  await closeFakeServers();
  await rm(folder, { recursive: true, force: true });
});

describe('boxes on /search', () => {
  it('are stored for each chunk docling converted, none for Markdown', () => {
    // The picture on page 3 has no text in the chunks (docling's image placeholder is left out), so no box.
    expect([0, 1, 2].map((index) => storedBoxes.get(`pump-station.pdf#${index}`)?.map((box) => box.page))).toEqual([[1], [2, 2, 3], [5]]);
    expect(storedBoxes.get('pump-station.pdf#1')![0]).toEqual({ page: 2, l: 50, t: 200, r: 545, b: 240, origin: 'TOPLEFT' });
    expect(storedBoxes.get('plover-notes.md#0')).toBeUndefined();
  });

  it('POST /search returns each result\'s boxes as stored, and none for Markdown', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/search', { query: 'heron pump bearings greased', k: 10 });
    expect(status).toBe(200);
    const results = body.results as Array<{ source: string; chunk_index: number; boxes?: unknown }>;
    expect(results.map((result) => result.source)).toEqual(expect.arrayContaining(['pump-station.pdf', 'plover-notes.md']));
    for (const result of results) expect(result.boxes, `${result.source}#${result.chunk_index}`).toEqual(storedBoxes.get(`${result.source}#${result.chunk_index}`));
    expect(results.find((result) => result.source === 'plover-notes.md')).not.toHaveProperty('boxes');
  });

  it('/openapi.json documents them on search results', async () => {
    const text = JSON.stringify(await readJson(await fetch(`${stack.baseUrl}/openapi.json`)));
    expect(text).toContain("where on its pages the passage's items lie");
  });
});

describe('boxes in Qdrant', () => {
  it('are a payload list, returned with hits and passages', async () => {
    const qdrant = new FakeQdrant();
    const store = new QdrantStore({ url: (await startFakeServer(qdrant.handle)).url, collection: 'docs-v2' });
    await store.open(null);
    const converters = new ConverterRegistry([new MarkdownPassthrough(), new DoclingServeConverter({ url: docling.baseUrl })]);
    await ingest({ source: new LocalDirectorySource(folder), store, converters, chunking: { chunkSize: 1200, chunkOverlap: 200 }, embedBatchSize: 8, concurrency: 2, prune: true, dryRun: false, logger: createLogger('silent') });

    const payloads = qdrant.payloadsOf('pump-station.pdf');
    expect(payloads.map((payload) => payload.boxes)).toEqual(payloads.map((payload) => storedBoxes.get(`pump-station.pdf#${String(payload.chunk_index)}`)));
    expect(qdrant.payloadsOf('plover-notes.md')[0]).not.toHaveProperty('boxes');

    const hits = await store.search({ sparse: encodeQuery('heron pump bearings greased'), limit: 10, prefetchLimit: 20, visibleGroups: [] });
    expect(hits.map((hit) => hit.source)).toEqual(expect.arrayContaining(['pump-station.pdf', 'plover-notes.md']));
    for (const hit of hits) expect(hit.boxes, hit.id).toEqual(storedBoxes.get(`${hit.source}#${hit.chunkIndex}`));
    const [passage] = await store.getChunks([hits.find((hit) => hit.source === 'pump-station.pdf')!.id], []);
    expect(passage?.boxes).toEqual(storedBoxes.get(`pump-station.pdf#${passage!.chunkIndex}`));
  });
});
