/**
 * One trace per request through the real app on the production adapters (TEI, Qdrant, gateway fakes):
 * spans exported by the real OTLP/HTTP exporter to a real receiver, checked as a tree. The W3C
 * traceparent format is https://www.w3.org/TR/trace-context/#traceparent-header; the span names and
 * attributes follow https://opentelemetry.io/docs/specs/semconv/http/http-spans/ and
 * https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/.
 */
import { loadConfig, parseIncomingTraceTrust, startTracing, type Tracing } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../../packages/core/test/adapters/fake-server.ts';
import { EMBED_MODEL, GATEWAY_MODEL, startProductionStack, type ProductionStack } from './production-stack.ts';
import { FAKE_USAGE } from './fakes/fake-gateway.ts';
import { startOtlpReceiver, traceTree, type OtlpReceiver, type ReceivedSpan } from './tracing/otlp-receiver.ts';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
const QUESTION = 'How many vacation days do new employees get?';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

let receiver: OtlpReceiver;
let tracing: Tracing;
let stack: ProductionStack;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = startTracing(
    loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'rag-test' }),
    { serviceName: 'rag-retrieval' },
  );
  // The test calls from 127.0.0.1, trusted here as the proxy in front would be (TRACE_TRUST_INCOMING).
  stack = await startProductionStack({ rerankCandidates: 4, traceTrust: parseIncomingTraceTrust('127.0.0.1/32,::1') });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

function traceparent(traceId: string, spanId: string): string {
  return `00-${traceId}-${spanId}-01`;
}

async function chat(headers: Record<string, string>, body: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${stack.baseUrl}/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query: QUESTION, ...body }) });
}

/** The spans of the trace, once the server span (the last to end) has been exported. */
async function spansOf(traceId: string): Promise<ReceivedSpan[]> {
  await expect.poll(async () => {
    await tracing.forceFlush();
    return receiver.spans.some((span) => span.traceId === traceId && span.kind === SERVER);
  }, { timeout: 10_000 }).toBe(true);
  return receiver.spans.filter((span) => span.traceId === traceId);
}

function only(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((span) => span.name === name);
  expect(found.map((span) => span.name), `spans named ${name}`).toEqual([name]);
  return found[0]!;
}

function traceparentsSeen(requests: RecordedRequest[], since: number): string[] {
  return requests.slice(since).map((request) => String(request.headers.traceparent));
}

describe('tracing one /chat', () => {
  it('exports one tree under the caller\'s span: retrieval (embeddings, bm25, store query, rerank), prompt, chat', async () => {
    const seen = { embed: stack.servers.embed.fake.requests.length, store: stack.servers.store.fake.requests.length, gateway: stack.servers.gateway.fake.requests.length, rerank: stack.servers.rerank.fake.requests.length };
    // k below the candidates fetched, so the reranker runs.
    const response = await chat({ traceparent: traceparent(CALLER_TRACE, CALLER_SPAN) }, { k: 3 });
    expect(response.status).toBe(200);
    const spans = await spansOf(CALLER_TRACE);
    console.log(`/chat trace:\n${traceTree(spans, CALLER_TRACE)}`);

    const server = only(spans, 'POST /chat');
    expect(server).toMatchObject({ kind: SERVER, parentSpanId: CALLER_SPAN, serviceName: 'rag-test' });
    expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/chat', 'url.path': '/chat', 'http.response.status_code': 200 });

    const retrieval = only(spans, 'retrieval');
    expect(retrieval.parentSpanId).toBe(server.spanId);
    expect(retrieval.attributes).toMatchObject({ 'gen_ai.operation.name': 'retrieval', 'rag.top_k': 3, 'rag.reranked': true });

    const embeddings = only(spans, `embeddings ${EMBED_MODEL}`);
    expect(embeddings).toMatchObject({ kind: CLIENT, parentSpanId: retrieval.spanId });
    expect(embeddings.attributes).toMatchObject({ 'gen_ai.operation.name': 'embeddings', 'gen_ai.request.model': EMBED_MODEL, 'gen_ai.provider.name': 'tei' });

    const sparse = only(spans, 'bm25 encode');
    expect(sparse.parentSpanId).toBe(retrieval.spanId);
    expect(sparse.attributes['rag.sparse.terms']).toBeGreaterThan(0);

    const query = only(spans, 'query qdrant');
    expect(query).toMatchObject({ kind: CLIENT, parentSpanId: retrieval.spanId });
    expect(query.attributes).toMatchObject({ 'db.system.name': 'qdrant', 'db.operation.name': 'query', 'rag.search.legs': 'dense+sparse', 'rag.search.limit': stack.rerankCandidates, 'rag.fusion.method': 'rrf' });
    expect(query.attributes['rag.search.candidates']).toBeGreaterThan(0);

    const rerank = only(spans, 'rerank fake-reranker');
    expect(rerank).toMatchObject({ kind: CLIENT, parentSpanId: retrieval.spanId });
    expect(rerank.attributes).toMatchObject({ 'gen_ai.operation.name': 'rerank', 'rag.rerank.candidates': query.attributes['rag.search.candidates'] });

    const prompt = only(spans, 'build prompt');
    expect(prompt.parentSpanId).toBe(server.spanId);
    expect(prompt.attributes['rag.prompt.passages']).toBeGreaterThan(0);

    const llm = only(spans, `chat ${GATEWAY_MODEL}`);
    expect(llm).toMatchObject({ kind: CLIENT, parentSpanId: server.spanId });
    expect(llm.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': GATEWAY_MODEL,
      'gen_ai.provider.name': 'openai',
      'gen_ai.usage.input_tokens': FAKE_USAGE.prompt_tokens,
      'gen_ai.usage.output_tokens': FAKE_USAGE.completion_tokens,
    });

    // Each dependency was called with the traceparent of the span that called it.
    expect(traceparentsSeen(stack.servers.embed.fake.requests, seen.embed)).toEqual([traceparent(CALLER_TRACE, embeddings.spanId)]);
    expect(traceparentsSeen(stack.servers.store.fake.requests, seen.store)).toEqual([traceparent(CALLER_TRACE, query.spanId)]);
    expect(traceparentsSeen(stack.servers.rerank.fake.requests, seen.rerank)).toEqual([traceparent(CALLER_TRACE, rerank.spanId)]);
    expect(traceparentsSeen(stack.servers.gateway.fake.requests, seen.gateway)).toEqual([traceparent(CALLER_TRACE, llm.spanId)]);

    // No query text by default (OTEL_RAG_RECORD_QUERY is off).
    const values = spans.flatMap((span) => Object.values(span.attributes).map(String));
    expect(values.filter((value) => value.includes('vacation'))).toEqual([]);
  });

  it('a streamed answer\'s chat span is the server span\'s child and carries the usage of the last chunk', async () => {
    const traceId = 'a'.repeat(31) + '1';
    const response = await chat({ traceparent: traceparent(traceId, CALLER_SPAN), accept: 'text/event-stream' });
    expect(await response.text()).toContain('event: done');
    const spans = await spansOf(traceId);
    const server = only(spans, 'POST /chat');
    const llm = only(spans, `chat ${GATEWAY_MODEL}`);
    expect(llm.parentSpanId).toBe(server.spanId);
    expect(llm.attributes).toMatchObject({ 'gen_ai.request.stream': true, 'gen_ai.usage.output_tokens': FAKE_USAGE.completion_tokens });
    const gatewayCall = stack.servers.gateway.fake.requests.at(-1)!;
    expect(gatewayCall.headers.traceparent).toBe(traceparent(traceId, llm.spanId));
  });

  it('a gateway failure marks the chat span and the server span with the error code', async () => {
    const traceId = 'b'.repeat(31) + '2';
    await stack.servers.gateway.fail('error500');
    try {
      const response = await chat({ traceparent: traceparent(traceId, CALLER_SPAN) });
      expect(response.status).toBe(503);
    } finally {
      await stack.servers.gateway.heal();
    }
    const spans = await spansOf(traceId);
    const llm = only(spans, `chat ${GATEWAY_MODEL}`);
    expect(llm).toMatchObject({ statusCode: ERROR, attributes: expect.objectContaining({ 'rag.error.code': 'RAG_GATEWAY_UNAVAILABLE' }) });
    const server = only(spans, 'POST /chat');
    expect(server).toMatchObject({ statusCode: ERROR, attributes: expect.objectContaining({ 'rag.error.code': 'RAG_GATEWAY_UNAVAILABLE', 'http.response.status_code': 503 }) });
  });

  it('a caller that sampled its trace out gets no spans, and its decision travels to the dependencies', async () => {
    const traceId = 'c'.repeat(31) + '3';
    const exportedBefore = receiver.spans.length;
    const embedCalls = stack.servers.embed.fake.requests.length;
    const response = await chat({ traceparent: `00-${traceId}-${CALLER_SPAN}-00` });
    expect(response.status).toBe(200);
    await tracing.forceFlush();
    expect(receiver.spans.slice(exportedBefore).map((span) => span.name)).toEqual([]);
    expect(String(stack.servers.embed.fake.requests[embedCalls]?.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
  });

  it('every route gets a server span: /v1 and /mcp too, a new trace without a traceparent', async () => {
    const before = receiver.spans.length;
    expect((await fetch(`${stack.baseUrl}/v1/models`)).status).toBe(200);
    const mcp = await fetch(`${stack.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search', arguments: { query: QUESTION } } }),
    });
    await mcp.text();
    await expect.poll(async () => {
      await tracing.forceFlush();
      return receiver.spans.slice(before).filter((span) => span.kind === SERVER).map((span) => span.name).sort();
    }, { timeout: 10_000 }).toEqual(['GET /v1/models', 'POST /mcp']);
    const mcpSpan = receiver.spans.slice(before).find((span) => span.name === 'POST /mcp')!;
    expect(mcpSpan.parentSpanId).toBeUndefined();
    expect(mcpSpan.attributes).toMatchObject({ 'http.route': '/mcp', 'http.response.status_code': mcp.status });
    // The MCP tool's retrieval runs inside the request's span.
    const retrieval = receiver.spans.find((span) => span.name === 'retrieval' && span.traceId === mcpSpan.traceId);
    expect(retrieval?.parentSpanId).toBe(mcpSpan.spanId);
    expect(receiver.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
  });
});
