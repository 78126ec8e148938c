/**
 * Trace context at the edge (TRACE_TRUST_INCOMING), through the real app on the production adapters with
 * a fake gateway that records the exact headers it receives, and spans exported to a real OTLP receiver.
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): traceparent `00-<32 hex>-<16 hex>-<2 hex>`;
 * "restart trace" is the mutation of a front gate, with tracestate cleaned up (#mutating-the-traceparent-field);
 * tracestate holds at most 32 list-members and is truncated by whole entries, those over 128 characters
 * first, then from the end (#tracestate-limits). W3C Baggage (https://www.w3.org/TR/baggage/) is the
 * `baggage` header. HTTP server spans (https://opentelemetry.io/docs/specs/semconv/http/http-spans/#http-server):
 * span name `{method} {http.route}`, `http.route` the route template, `url.path` required and "sensitive
 * content provided in url.path SHOULD be scrubbed"; `url.query` is a separate attribute, not part of url.path.
 */
import { loadConfig, parseIncomingTraceTrust, startTracing, type Tracing } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../../packages/core/test/adapters/fake-server.ts';
import { startProductionStack, type ProductionStack } from './production-stack.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './tracing/otlp-receiver.ts';

const SERVER = 2;
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const QUESTION = 'How many vacation days do new employees get?';
/** About 3 KB each, as the audit's probe sent them. */
const BAGGAGE = ['tenant=admin', ...Array.from({ length: 150 }, (_, i) => `k${i}=value${i}`)].join(',');
const LONG_TRACESTATE = Array.from({ length: 40 }, (_, i) => `vendor${i}=${'v'.repeat(70)}`).join(',');

let receiver: OtlpReceiver;
let tracing: Tracing;
let untrusting: ProductionStack;
let trusting: ProductionStack;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), { serviceName: 'rag-retrieval' });
  // The default: TRACE_TRUST_INCOMING unset.
  untrusting = await startProductionStack({ traceTrust: parseIncomingTraceTrust(loadConfig({}).TRACE_TRUST_INCOMING) });
  // The test's requests come from 127.0.0.1: trusted as the proxy in front.
  trusting = await startProductionStack({ traceTrust: parseIncomingTraceTrust('10.0.0.0/8,127.0.0.1') });
}, 60_000);

afterAll(async () => {
  await untrusting?.close();
  await trusting?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

async function chat(stack: ProductionStack, headers: Record<string, string>): Promise<RecordedRequest> {
  const before = stack.servers.gateway.fake.requests.length;
  const response = await fetch(`${stack.baseUrl}/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query: QUESTION }) });
  expect(response.status).toBe(200);
  const calls = stack.servers.gateway.fake.requests.slice(before);
  expect(calls).toHaveLength(1);
  return calls[0]!;
}

function traceIdOf(traceparent: unknown): string {
  const match = /^00-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/.exec(String(traceparent));
  expect(match, `traceparent ${String(traceparent)}`).not.toBeNull();
  return match![1]!;
}

async function serverSpans(where: (span: ReceivedSpan) => boolean, count = 1): Promise<ReceivedSpan[]> {
  await expect.poll(async () => {
    await tracing.forceFlush();
    return receiver.spans.filter((span) => span.kind === SERVER && where(span)).length;
  }, { timeout: 10_000 }).toBe(count);
  return receiver.spans.filter((span) => span.kind === SERVER && where(span));
}

describe('an untrusted caller (the default)', () => {
  it('gets a new trace: its trace id, sampling decision, tracestate and baggage stay out; its traceparent is only a link', async () => {
    // Sampled out by the caller: the decision must not be adopted either.
    const gatewayCall = await chat(untrusting, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00`, tracestate: `congo=t61rcWkgMzE,${'rojo=00f067aa0ba902b7,'.repeat(20)}x=1`, baggage: BAGGAGE });
    expect(gatewayCall.headers.baggage).toBeUndefined();
    expect(gatewayCall.headers.tracestate).toBeUndefined();
    const traceId = traceIdOf(gatewayCall.headers.traceparent);
    expect(traceId).not.toBe(CALLER_TRACE);
    // Our own sampler (parentbased_always_on, a root here) samples it: flags 01.
    expect(String(gatewayCall.headers.traceparent).endsWith('-01')).toBe(true);
    const [server] = await serverSpans((span) => span.traceId === traceId);
    expect(server!.parentSpanId).toBeUndefined();
    expect(server!.links).toEqual([{ traceId: CALLER_TRACE, spanId: CALLER_SPAN }]);
    const values = receiver.spans.filter((span) => span.traceId === traceId).flatMap((span) => Object.values(span.attributes).map(String));
    expect(values.filter((value) => value.includes('admin') || value.includes('congo'))).toEqual([]);
  });

  it('an address list that does not hold the peer is no trust either', async () => {
    const trust = parseIncomingTraceTrust('10.0.0.0/8,2001:db8::/32');
    expect(trust.trusts('127.0.0.1')).toBe(false);
    expect(trust.trusts('10.20.30.40')).toBe(true);
    expect(trust.trusts('::ffff:10.20.30.40')).toBe(true);
    expect(trust.trusts('2001:db8::1')).toBe(true);
    expect(trust.trusts(undefined)).toBe(false);
  });
});

describe('a trusted proxy', () => {
  it('is continued: its trace id, and a tracestate cut to the spec\'s 32 members and 512 characters; baggage never', async () => {
    const gatewayCall = await chat(trusting, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: LONG_TRACESTATE, baggage: BAGGAGE });
    expect(traceIdOf(gatewayCall.headers.traceparent)).toBe(CALLER_TRACE);
    expect(gatewayCall.headers.baggage).toBeUndefined();
    const forwarded = String(gatewayCall.headers.tracestate);
    // 40 entries of 77 characters: 6 fit in 512 (6 × 77 + 5 commas = 467), whole entries from the front.
    expect(forwarded).toBe(LONG_TRACESTATE.split(',').slice(0, 6).join(','));
    expect(forwarded.length).toBeLessThanOrEqual(512);
  });

  it('a traceparent past any version\'s size is not parsed: a new trace', async () => {
    const gatewayCall = await chat(trusting, { traceparent: `01-${CALLER_TRACE}-${CALLER_SPAN}-01-${'a'.repeat(600)}` });
    expect(traceIdOf(gatewayCall.headers.traceparent)).not.toBe(CALLER_TRACE);
  });
});

describe('what a server span records of the path', () => {
  it('the route template as http.route and the name; url.path without the query string or a document name', async () => {
    const base = untrusting.baseUrl;
    const search = await fetch(`${base}/search?debug=layoffs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: QUESTION }) });
    expect(search.status).toBe(200);
    const document = await fetch(`${base}/documents/hr%2Flayoffs-2027-plan.pdf`);
    expect(document.status).toBeGreaterThanOrEqual(400);
    const unknown = await fetch(`${base}/hr/layoffs-2027-plan.pdf`);
    expect(unknown.status).toBe(404);
    const spans = await serverSpans((span) => span.name === 'POST /search' || span.name === 'GET /documents/:source' || span.name === 'GET', 3);
    const byName = Object.fromEntries(spans.map((span) => [span.name, span.attributes]));
    expect(byName['POST /search']).toMatchObject({ 'http.route': '/search', 'url.path': '/search', 'http.response.status_code': 200 });
    expect(byName['GET /documents/:source']).toMatchObject({ 'http.route': '/documents/:source', 'url.path': '/documents/REDACTED', 'http.response.status_code': document.status });
    expect(byName['GET']).toMatchObject({ 'url.path': 'REDACTED', 'http.response.status_code': 404 });
    expect(byName['GET']!['http.route']).toBeUndefined();
    const values = spans.flatMap((span) => Object.values(span.attributes).map(String));
    expect(values.filter((value) => value.includes('layoffs'))).toEqual([]);
  });
});
