import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@lancedb/lancedb';
import { extractText, getDocumentProxy } from 'unpdf';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Chunk } from '../../src/index.ts';
import { ConverterRegistry, createConverters, LocalDirectorySource, type Converter } from '../../src/ingestion.ts';
import { LanceDbStore } from '../../src/embedded.ts';
import { encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { pptxDeck } from './fixture-documents.ts';
import { HTML_PAGE } from './fixture-folder.ts';
import { startHarness, type Harness } from './ingest-harness.ts';

const FIELD_MANUAL = new URL('../fixtures/pages/field-manual.pdf', import.meta.url).pathname;

let folder: string;
let harness: Harness;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-pages-'));
  await copyFile(FIELD_MANUAL, join(folder, 'field-manual.pdf'));
  await writeFile(join(folder, 'roadmap.pptx'), await pptxDeck());
  await writeFile(join(folder, 'notes.md'), '# Notes\n\nThe plover panel sits in the pump room.\n');
  await writeFile(join(folder, 'status.html'), HTML_PAGE);
  harness = await startHarness();
});

afterEach(async () => {
  await harness.close();
  await rm(folder, { recursive: true, force: true });
});

/** Every chunk of a document, in order, as a search or a passage read would return it. */
async function chunksOf(source: string): Promise<Chunk[]> {
  const document = (await harness.store.listDocuments()).find((candidate) => candidate.source === source);
  const chunks = await harness.store.getChunks(document?.chunkIds ?? [], []);
  return chunks.sort((a, b) => a.chunkIndex - b.chunkIndex);
}

/** The PDF's own page texts, read with pdf.js apart from the converter: what a reader of page N sees. */
async function pdfPageTexts(path: string): Promise<string[]> {
  const document = await getDocumentProxy(new Uint8Array(await readFile(path)));
  const { text } = await extractText(document, { mergePages: false });
  await document.destroy();
  return text.map(flat);
}

function flat(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The pages on which `text` (whitespace flattened) starts and ends, found in the pages' texts joined by a
 * space: a passage running over a page end is found whole, and its opening words may be few on that page.
 */
function pagesHolding(text: string, pages: readonly string[]): { first: number; last: number } {
  const whole = pages.join(' ');
  const start = whole.indexOf(text.slice(0, 60));
  const endSnippet = text.slice(-60);
  const end = whole.indexOf(endSnippet, start) + endSnippet.length - 1;
  expect(start, `"${text.slice(0, 60)}" is in the PDF`).toBeGreaterThanOrEqual(0);
  const pageAt = (offset: number) => {
    let pageEnd = 0;
    for (const [index, page] of pages.entries()) {
      pageEnd += page.length + 1;
      if (offset < pageEnd) return index + 1;
    }
    return pages.length;
  };
  return { first: pageAt(start), last: pageAt(end) };
}

/** The chunk's own text: the `<source> > <headings>` line and blank line before it left out. */
function bodyOf(chunk: Pick<Chunk, 'text'>): string {
  return flat(chunk.text.slice(chunk.text.indexOf('\n\n') + 2));
}

/** The converters as they were before pages: Markdown only, so the chunks record none. */
function convertersWithoutPages(): ConverterRegistry {
  const current = createConverters({ DOCLING_URL: undefined, DOCLING_API_KEY: undefined, DOCLING_TIMEOUT_MS: 600_000 });
  const plain = current.extensions.map((extension): Converter => {
    const converter = current.forDocument(`x.${extension}`)!;
    return { extensions: [extension], toMarkdown: (bytes, fileName, signal) => converter.toMarkdown(bytes, fileName, signal) };
  });
  return new ConverterRegistry(plain);
}

describe('page numbers of PDF chunks (embedded converter)', () => {
  it('gives each chunk the page its text starts on, and every page it runs over, as the PDF shows them', async () => {
    await harness.run(new LocalDirectorySource(folder));
    const pages = await pdfPageTexts(FIELD_MANUAL);
    const chunks = await chunksOf('field-manual.pdf');

    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      const { first, last } = pagesHolding(bodyOf(chunk), pages);
      // From the page of its opening words to the page of its closing words, without gaps.
      expect(chunk.pages, `chunk ${chunk.chunkIndex}`).toEqual(Array.from({ length: last - first + 1 }, (_, offset) => first + offset));
    }
    // 300-character chunks over pages of about 400: some stay on one page, some run over a page end.
    expect(chunks.some((chunk) => chunk.pages!.length === 1)).toBe(true);
    expect(chunks.some((chunk) => chunk.pages!.length === 2)).toBe(true);
  });

  it('cites the page whose text holds the passage a search finds', async () => {
    await harness.run(new LocalDirectorySource(folder));
    const pages = await pdfPageTexts(FIELD_MANUAL);
    const hits = await harness.store.search({ sparse: encodeQuery('osprey cartridge seal swell'), limit: 3, prefetchLimit: 20, visibleGroups: [] });

    const [hit] = hits;
    expect(hit?.source).toBe('field-manual.pdf');
    expect(hit!.pages![0]).toBe(pagesHolding(bodyOf(hit!), pages).first);

    // A server reads the view the ingest run saved: the pages come with it.
    await harness.store.inner.saveSearchView();
    const server = new LanceDbStore({ dataDir: harness.dataDir, collection: 'test' });
    await server.open(await harness.embedder.describe(), { create: false });
    const served = await server.search({ sparse: encodeQuery('osprey cartridge seal swell'), limit: 3, prefetchLimit: 20, visibleGroups: [] });
    await server.close();
    expect(served.map((found) => [found.id, found.pages])).toEqual(hits.map((found) => [found.id, found.pages]));
  });
});

describe('slide numbers of PPTX chunks (embedded converter)', () => {
  it('gives each chunk its slide number, in presentation order', async () => {
    await harness.run(new LocalDirectorySource(folder));
    const chunks = await chunksOf('roadmap.pptx');

    // pptxDeck: "Quarterly roadmap", "Risks & mitigations", then a slide without a title.
    expect(chunks.map((chunk) => [chunk.headingPath, chunk.pages])).toEqual([
      ['Quarterly roadmap', [1]],
      ['Risks & mitigations', [2]],
      ['Slide 3', [3]],
    ]);
  });
});

describe('documents without pages', () => {
  it('gives Markdown and HTML chunks no pages at all', async () => {
    await harness.run(new LocalDirectorySource(folder));
    for (const source of ['notes.md', 'status.html']) {
      const chunks = await chunksOf(source);
      expect(chunks.length).toBeGreaterThan(0);
      for (const chunk of chunks) expect(chunk).not.toHaveProperty('pages');
    }
  });
});

describe('an index made before pages were recorded', () => {
  it('re-chunks only its PDF and PPTX documents, once, and keeps a table without the column working', async () => {
    const before = await harness.run(new LocalDirectorySource(folder), { converters: convertersWithoutPages() });
    expect(before.upserts).toBeGreaterThan(0);
    // The table as an older version made it: no pages column at all.
    await harness.store.inner.close();
    const table = await (await connect(join(harness.dataDir, 'lancedb'))).openTable('test');
    await table.dropColumns(['pages']);
    table.close();
    // A reader (a server, a dry run) opens it as it is: no column added, searches answer without pages.
    const reader = new LanceDbStore({ dataDir: harness.dataDir, collection: 'test' });
    await reader.open(await harness.embedder.describe(), { create: false });
    const [oldHit] = await reader.search({ sparse: encodeQuery('osprey cartridge'), limit: 1, prefetchLimit: 10, visibleGroups: [] });
    expect(oldHit?.source).toBe('field-manual.pdf');
    expect(oldHit).not.toHaveProperty('pages');
    expect((await reader.listDocuments()).every((document) => document.pagesRecorded === false)).toBe(true);
    await reader.close();
    await harness.store.inner.open(await harness.embedder.describe());
    expect((await chunksOf('field-manual.pdf'))[0]).not.toHaveProperty('pages');

    const upgrade = await harness.run(new LocalDirectorySource(folder));
    const pagedChunks = (await chunksOf('field-manual.pdf')).length + (await chunksOf('roadmap.pptx')).length;

    // The PDF and the PPTX are converted again; the Markdown and the HTML are not touched.
    expect(upgrade.unchanged).toBe(2);
    expect(upgrade.upserts).toBe(pagedChunks);
    expect(harness.store.upsertedPoints).toBe(pagedChunks);
    expect((await chunksOf('field-manual.pdf')).every((chunk) => chunk.pages!.length > 0)).toBe(true);
    expect((await chunksOf('roadmap.pptx')).map((chunk) => chunk.pages)).toEqual([[1], [2], [3]]);

    const next = await harness.run(new LocalDirectorySource(folder));
    expect(next.unchanged).toBe(4);
    expect(next.upserts).toBe(0);
  });
});

