/**
 * The user's query is on no span unless OTEL_RAG_RECORD_QUERY=true asks for it (documented as sensitive).
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { afterEach, expect, it } from 'vitest';
import { loadConfig, Retriever, startTracing, Telemetry, type SearchHit, type Tracing, type VectorStore } from '../../src/index.ts';

const QUERY = 'salary of employee 4711';

/** Only what Retriever.retrieve uses of a store. */
const store = {
  name: 'stub',
  search: async (): Promise<SearchHit[]> => [],
} as unknown as VectorStore;

let tracing: Tracing | undefined;
afterEach(async () => {
  await tracing?.shutdown();
  tracing = undefined;
});

async function attributesAfterOneRetrieval(env: Record<string, string>) {
  const exporter = new InMemorySpanExporter();
  tracing = startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', ...env }), { serviceName: 't', createExporter: () => exporter });
  const telemetry = new Telemetry();
  await new Retriever({ store, rerankCandidates: 10, telemetry }).retrieve(QUERY, 5, []);
  await telemetry.shutdown();
  await tracing.forceFlush();
  return exporter.getFinishedSpans().flatMap((span) => Object.values(span.attributes).map(String));
}

it('records no query text by default', async () => {
  const values = await attributesAfterOneRetrieval({});
  expect(values.length).toBeGreaterThan(0);
  expect(values.filter((value) => value.includes('4711'))).toEqual([]);
});

it('records the query on the retrieval span with OTEL_RAG_RECORD_QUERY=true', async () => {
  expect(await attributesAfterOneRetrieval({ OTEL_RAG_RECORD_QUERY: 'true' })).toContain(QUERY);
});
