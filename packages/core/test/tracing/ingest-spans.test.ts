/**
 * An ingest run is one trace: listing, one span per document with its conversion, one span per
 * embedding batch (GenAI naming: `embeddings {model}`), the upserts and the prune, all under `ingest`.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createLogger, ingest, loadConfig, startTracing, type Embedder, type Tracing } from '../../src/index.ts';
import { ConverterRegistry, LocalDirectorySource, MarkdownPassthrough } from '../../src/ingestion.ts';
import { LanceDbStore } from '../../src/embedded.ts';

const DIMENSION = 4;
/** Deterministic vectors; the spans are what this test is about. */
const embedder: Embedder = {
  modelId: 'test/letters',
  provider: 'test',
  describe: async () => ({ model: 'test/letters', dimension: DIMENSION }),
  embedDocuments: async (texts) => texts.map((text) => [text.length % 7, 1, 2, 3].map((x) => x + 1)),
  embedQuery: async () => [1, 2, 3, 4],
};

let dir: string;
let tracing: Tracing;
let exporter: InMemorySpanExporter;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rag-ingest-trace-'));
  exporter = new InMemorySpanExporter();
  tracing = startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), { serviceName: 'rag-ingest', createExporter: () => exporter });
});

afterEach(async () => {
  await tracing.shutdown();
  await rm(dir, { recursive: true, force: true });
});

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

it('traces one run: listing, each document and its conversion, embedding batches, upserts, prune', async () => {
  const docs = join(dir, 'docs');
  await mkdir(docs);
  await writeFile(join(docs, 'a.md'), '# Alpha\n\nFirst document about alpha.\n');
  await writeFile(join(docs, 'b.md'), '# Beta\n\nSecond document about beta.\n');
  const store = new LanceDbStore({ dataDir: join(dir, 'data'), collection: 'traced' });
  await store.open(await embedder.describe());
  const run = (folder: string) =>
    ingest({
      source: new LocalDirectorySource(folder),
      store,
      embedder,
      converters: new ConverterRegistry([new MarkdownPassthrough()]),
      chunking: { chunkSize: 1200, chunkOverlap: 200 },
      embedBatchSize: 8,
      concurrency: 1,
      prune: true,
      forcePrune: true,
      dryRun: false,
      logger: createLogger('silent'),
    });
  try {
    await run(docs);
    await rm(join(docs, 'b.md'));
    await run(docs);
  } finally {
    await store.close();
  }
  await tracing.forceFlush();
  const spans = exporter.getFinishedSpans();
  const roots = spans.filter((span) => span.name === 'ingest');
  expect(roots).toHaveLength(2);
  const [first, second] = roots.map((root) => spans.filter((span) => span.spanContext().traceId === root.spanContext().traceId));
  const byName = (ofRun: ReadableSpan[], name: string) => ofRun.filter((span) => span.name === name);
  const root = roots[0]!;
  expect(root.attributes).toMatchObject({ 'rag.ingest.files': 2, 'rag.ingest.upserts': 2, 'rag.ingest.errors': 0 });
  for (const name of ['list indexed documents', 'list source', 'upsert lancedb']) {
    const found = byName(first!, name);
    expect(found.length, name).toBeGreaterThan(0);
    expect(found.map(parentOf), name).toEqual(found.map(() => root.spanContext().spanId));
  }
  const documents = byName(first!, 'sync document');
  expect(documents.map(parentOf)).toEqual([root.spanContext().spanId, root.spanContext().spanId]);
  expect(documents[0]!.attributes).toMatchObject({ 'rag.document.type': '.md' });
  const documentIds = documents.map((span) => span.spanContext().spanId);
  expect(byName(first!, 'convert').map(parentOf).sort()).toEqual([...documentIds].sort());
  const batches = byName(first!, 'embeddings test/letters');
  expect(batches.map(parentOf).sort()).toEqual([...documentIds].sort());
  expect(batches[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'embeddings', 'gen_ai.request.model': 'test/letters', 'rag.embed.batch_size': 1 });
  // The second run found b.md gone: its chunk is pruned under the run's span.
  const prune = byName(second!, 'prune');
  expect(prune.map(parentOf)).toEqual([roots[1]!.spanContext().spanId]);
  expect(roots[1]!.attributes).toMatchObject({ 'rag.ingest.deletes': 1 });
});
