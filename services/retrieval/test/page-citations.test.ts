/**
 * Page numbers on every interface (docs/api.md, "Page numbers"): a PDF (the committed four-page fixture),
 * a PPTX deck and a Markdown file ingested with the embedded converters into the real app; each result and
 * citation of the PDF and the deck carries `page`, and `pages` only when its passage spans several, exactly
 * as the stored chunk records them; the Markdown's carry neither. The pages themselves are checked against
 * the PDF's own page texts in packages/core/test/ingest/page-numbers.test.ts.
 */
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLogger, encodeQuery, ingest, QdrantStore, type IngestSummary } from '@rag/core';
import { ConverterRegistry, createConverters, LocalDirectorySource, PdfConverter, PptxConverter, type Converter } from '@rag/core/ingestion';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakeServers, startFakeServer } from '../../../packages/core/test/adapters/fake-server.ts';
import { pptxDeck } from '../../../packages/core/test/ingest/fixture-documents.ts';
import { FakeQdrant } from './fakes/fake-qdrant.ts';
import { postJson, readJson, startTestStack, type TestStack } from './test-stack.ts';

const FIELD_MANUAL = new URL('../../../packages/core/test/fixtures/pages/field-manual.pdf', import.meta.url).pathname;

let folder: string;
let stack: TestStack;
/** Each stored chunk's pages, by `source#chunk_index`. */
const storedPages = new Map<string, readonly number[] | undefined>();

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-page-citations-'));
  await copyFile(FIELD_MANUAL, join(folder, 'field-manual.pdf'));
  await writeFile(join(folder, 'roadmap.pptx'), await pptxDeck());
  await writeFile(join(folder, 'plover-notes.md'), '# Plover notes\n\nThe plover panel hangs beside the pump room door; its alarm codes are in the field manual.\n');
  stack = await startTestStack({ folder, converters: [new PdfConverter(), new PptxConverter()] });
  for (const document of await stack.store.listDocuments()) {
    for (const chunk of await stack.store.getChunks(document.chunkIds, [])) storedPages.set(`${chunk.source}#${chunk.chunkIndex}`, chunk.pages);
  }
});

afterAll(async () => {
  await stack?.close();
  await closeFakeServers();
  await rm(folder, { recursive: true, force: true });
});

/** What the contract says a passage of `source#chunk_index` carries: page, and pages only past one. */
function expectedPageFields(source: string, chunkIndex: number): Record<string, unknown> {
  const pages = storedPages.get(`${source}#${chunkIndex}`);
  if (!pages || pages.length === 0) return {};
  return pages.length > 1 ? { page: pages[0], pages: [...pages] } : { page: pages[0] };
}

function expectPageFields(passages: Array<{ source: string; chunk_index: number; page?: unknown; pages?: unknown }>): void {
  expect(passages.length).toBeGreaterThan(0);
  for (const passage of passages) {
    const { page, pages } = passage;
    expect({ ...(page === undefined ? {} : { page }), ...(pages === undefined ? {} : { pages }) }, `${passage.source}#${passage.chunk_index}`).toEqual(
      expectedPageFields(passage.source, passage.chunk_index),
    );
  }
}

describe('page numbers in results and citations', () => {
  it('are recorded for the PDF (some passages spanning two pages) and the deck, not for Markdown', () => {
    const pdf = [...storedPages].filter(([label]) => label.startsWith('field-manual.pdf#')).map(([, pages]) => pages);
    expect(pdf.length).toBeGreaterThan(1);
    expect(pdf.some((pages) => pages!.length > 1)).toBe(true);
    expect([0, 1, 2].map((index) => storedPages.get(`roadmap.pptx#${index}`))).toEqual([[1], [2], [3]]);
    expect(storedPages.get('plover-notes.md#0')).toBeUndefined();
  });

  it('POST /search: page where the passage starts, pages when it spans several, neither for Markdown', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/search', { query: 'plover alarm codes panel', k: 10 });
    expect(status).toBe(200);
    expectPageFields(body.results);
    const sources = body.results.map((result: { source: string }) => result.source);
    expect(sources).toContain('plover-notes.md');
    expect(sources).toContain('field-manual.pdf');
    expect(body.results.find((result: { source: string }) => result.source === 'plover-notes.md')).not.toHaveProperty('page');
    expect(body.results.some((result: { pages?: number[] }) => result.pages !== undefined && result.pages.length === 2)).toBe(true);
  });

  it('POST /chat: in the JSON answer and in the streamed citations and done events', async () => {
    const query = 'What does code P-17 on the plover panel mean?';
    const { body: answer } = await postJson(stack.baseUrl, '/chat', { query });
    expectPageFields(answer.citations);
    expect(answer.citations.some((citation: { page?: number }) => citation.page !== undefined)).toBe(true);

    const response = await fetch(`${stack.baseUrl}/chat`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ query }) });
    const events = [...(await response.text()).matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((match) => ({ event: match[1], data: JSON.parse(match[2]!) }));
    const citations = events.find((event) => event.event === 'citations')!.data.citations;
    expectPageFields(citations);
    expect(citations.some((citation: { page?: number }) => citation.page !== undefined)).toBe(true);
    expect(events.find((event) => event.event === 'done')!.data.citations).toEqual(answer.citations);
  });

  it('POST /v1/chat/completions: an extra field of its citations, streamed too', async () => {
    const request = { model: 'rag', messages: [{ role: 'user', content: 'Which slide lists the risks and mitigations?' }] };
    const { body } = await postJson(stack.baseUrl, '/v1/chat/completions', request);
    expectPageFields(body.citations);
    expect(body.citations).toContainEqual(expect.objectContaining({ source: 'roadmap.pptx', page: 2 }));

    const stream = await fetch(`${stack.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...request, stream: true }) });
    const chunks = [...(await stream.text()).matchAll(/^data: (\{.*\})$/gm)].map((match) => JSON.parse(match[1]!));
    const withCitations = chunks.filter((chunk) => chunk.citations);
    expect(withCitations.length).toBeGreaterThan(0);
    for (const chunk of withCitations) expectPageFields(chunk.citations);
  });

  it('the MCP tools: search passages, ask citations and get_passage', async () => {
    const client = new Client({ name: 'rag-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`)));
    try {
      const search: any = await client.callTool({ name: 'search', arguments: { query: 'osprey filter cartridge', k: 5 } });
      expectPageFields(search.structuredContent.passages);
      expect(search.structuredContent.passages[0]).toMatchObject({ source: 'field-manual.pdf', page: expect.any(Number) });
      expect(search.content[0].text).toMatch(/\[field-manual\.pdf#\d+\] \(.*p\. \d+, score/);

      const ask: any = await client.callTool({ name: 'ask', arguments: { question: 'When is an osprey filter due?' } });
      expectPageFields(ask.structuredContent.citations);
      expect(ask.structuredContent.citations[0]).toHaveProperty('page');

      const passage: any = await client.callTool({ name: 'get_passage', arguments: { source: 'roadmap.pptx', chunk_index: 1 } });
      expect(passage.structuredContent.passage).toMatchObject({ source: 'roadmap.pptx', chunk_index: 1, page: 2 });
      expect(passage.structuredContent.passage).not.toHaveProperty('pages');
    } finally {
      await client.close();
    }
  });

  it('/openapi.json documents page and pages on results and citations', async () => {
    const spec = await readJson(await fetch(`${stack.baseUrl}/openapi.json`));
    const text = JSON.stringify(spec);
    expect(text).toContain('PDF page or PPTX slide where the passage starts');
    expect(text).toContain('every page the passage touches, ascending');
  });
});

/** The converters as they were before pages: Markdown only, so the chunks record none. */
function convertersWithoutPages(): ConverterRegistry {
  const current = createConverters({ DOCLING_URL: undefined, DOCLING_API_KEY: undefined, DOCLING_TIMEOUT_MS: 600_000 });
  return new ConverterRegistry(
    current.extensions.map((extension): Converter => {
      const converter = current.forDocument(`x.${extension}`)!;
      return { extensions: [extension], toMarkdown: (bytes, fileName, signal) => converter.toMarkdown(bytes, fileName, signal) };
    }),
  );
}

describe('page numbers in Qdrant', () => {
  it('are a payload field, returned with hits; a collection written before them re-chunks only its PDF and PPTX', async () => {
    const qdrant = new FakeQdrant();
    const store = new QdrantStore({ url: (await startFakeServer(qdrant.handle)).url, collection: 'docs-v2' });
    await store.open(null);
    const sync = (converters: ConverterRegistry): Promise<IngestSummary> =>
      ingest({ source: new LocalDirectorySource(folder), store, converters, chunking: { chunkSize: 1200, chunkOverlap: 200 }, embedBatchSize: 8, concurrency: 2, prune: true, dryRun: false, logger: createLogger('silent') });

    await sync(convertersWithoutPages());
    expect(qdrant.payloadsOf('field-manual.pdf').every((payload) => !('pages' in payload))).toBe(true);
    const upgrade = await sync(createConverters({ DOCLING_URL: undefined, DOCLING_API_KEY: undefined, DOCLING_TIMEOUT_MS: 600_000 }));

    // The payload holds each chunk's pages as a list of integers, as the embedded store's column does.
    const pdfPayloads = qdrant.payloadsOf('field-manual.pdf');
    const deckPayloads = qdrant.payloadsOf('roadmap.pptx');
    expect(pdfPayloads.map((payload) => payload.pages)).toEqual(pdfPayloads.map((payload) => storedPages.get(`field-manual.pdf#${String(payload.chunk_index)}`)));
    expect(deckPayloads.map((payload) => payload.pages)).toEqual([[1], [2], [3]]);
    expect(qdrant.payloadsOf('plover-notes.md')[0]).not.toHaveProperty('pages');
    // Only the two paged documents were converted and written again.
    expect(upgrade.unchanged).toBe(1);
    expect(upgrade.upserts).toBe(pdfPayloads.length + deckPayloads.length);
    expect((await sync(createConverters({ DOCLING_URL: undefined, DOCLING_API_KEY: undefined, DOCLING_TIMEOUT_MS: 600_000 }))).unchanged).toBe(3);

    const hits = await store.search({ sparse: encodeQuery('plover alarm codes'), limit: 10, prefetchLimit: 20, visibleGroups: [] });
    expect(hits.length).toBeGreaterThan(1);
    for (const hit of hits) expect(hit.pages, hit.id).toEqual(storedPages.get(`${hit.source}#${hit.chunkIndex}`));
    const [passage] = await store.getChunks([hits.find((hit) => hit.source === 'field-manual.pdf')!.id], []);
    expect(passage?.pages).toEqual(storedPages.get(`field-manual.pdf#${passage!.chunkIndex}`));
  });
});
