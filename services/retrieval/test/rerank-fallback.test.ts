/**
 * The reranker going down on the production path: /search and /chat answer from the fused ranking and
 * say so (`"reranked": false`), /metrics counts it, the log says it once per outage, requests stop
 * waiting for a reranker known to be down, and reranking resumes within a probe interval of its return.
 * RERANK_FALLBACK=fail keeps the named 503.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { within } from '../../../packages/core/test/adapters/fake-server.ts';
import { rerankScore } from './fakes/fake-tei.ts';
import { startProductionStack, type ProductionStack } from './production-stack.ts';
import { postJson } from './test-stack.ts';
import { httpDispatcher } from '../../../packages/core/src/http/http-dispatcher.ts';

/** Candidates 4, k 3: the reranker has something to reorder, so its absence shows. */
const K = 3;
const PROBE_INTERVAL_MS = 1_000;
/** Long enough that a request waiting on the hung reranker would be seen waiting. */
const TIMEOUT_MS = 2_000;
/** Chosen because the reranker reorders its fused candidates: the fallback is visibly another ranking. */
const QUERY = 'who do I call when the database is down?';

interface LogLine {
  level: 'warn' | 'info';
  fields: Record<string, unknown>;
  message: string;
}

function recordingLog() {
  const lines: LogLine[] = [];
  const record = (level: LogLine['level']) => (fields: Record<string, unknown>, message: string) => void lines.push({ level, fields, message });
  return { lines, log: { warn: record('warn'), info: record('info') } as never };
}

async function search(stack: ProductionStack, query = QUERY) {
  const started = performance.now();
  const { status, body } = await within(postJson(stack.baseUrl, '/search', { query, k: K }), 10_000);
  return { status, body, ms: performance.now() - started };
}

/** The store's own fused answer to the latest query, as (source, chunk) keys in order. */
function fusedOrder(stack: ProductionStack): string[] {
  return stack.qdrant.answers.at(-1)!.points.map((point) => `${point.payload.source}#${point.payload.chunk_index}`);
}

function keys(results: Array<{ source: string; chunk_index: number }>): string[] {
  return results.map((result) => `${result.source}#${result.chunk_index}`);
}

/** The fallback counter on /metrics for one error code, or summed over all of them. */
async function fallbackCount(stack: ProductionStack, code?: string): Promise<number> {
  const metrics = await (await fetch(`${stack.baseUrl}/metrics`, { dispatcher: httpDispatcher })).text();
  const prefix = code ? `rag_retrieval_rerank_fallbacks_total{error_type="${code}"}` : 'rag_retrieval_rerank_fallbacks_total';
  const rows = metrics.split('\n').filter((row) => row.startsWith(prefix));
  return rows.reduce((sum, row) => sum + Number(row.split(' ').at(-1)), 0);
}

function sseEvents(text: string): Array<{ event: string; data: any }> {
  return [...text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((match) => ({ event: match[1]!, data: JSON.parse(match[2]!) }));
}

describe('with RERANK_FALLBACK=fused (the default)', () => {
  let stack: ProductionStack;
  const { lines, log } = recordingLog();

  beforeAll(async () => {
    stack = await startProductionStack({ timeoutMs: TIMEOUT_MS, rerankProbeIntervalMs: PROBE_INTERVAL_MS, retrieverLog: log });
  });

  afterEach(async () => {
    await stack.servers.rerank.heal();
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('reranks while the reranker is up: reranked true, rerank scores, an order other than the fused one', async () => {
    const { status, body } = await search(stack);
    expect(status).toBe(200);
    expect(body.reranked).toBe(true);
    for (const result of body.results) expect(result.score).toBe(rerankScore(QUERY, result.text));
    expect(keys(body.results)).not.toEqual(fusedOrder(stack).slice(0, K));
  });

  it('answers from the fused ranking while it refuses, counts each fallback, warns once, and reranks again once it is back', async () => {
    const before = await fallbackCount(stack, 'RAG_RERANK_UNAVAILABLE');
    lines.length = 0;
    await stack.servers.rerank.fail('refuse');
    const degraded = [];
    for (let i = 0; i < 5; i++) degraded.push(await search(stack));
    for (const { status, body } of degraded) {
      expect(status).toBe(200);
      expect(body.reranked).toBe(false);
      expect(keys(body.results)).toEqual(fusedOrder(stack).slice(0, K));
      const fusedScores = stack.qdrant.answers.at(-1)!.points.slice(0, K).map((point) => point.score);
      expect(body.results.map((result: { score: number }) => result.score)).toEqual(fusedScores);
      for (const result of body.results) expect(result.score).toBe(result.fusion_score);
    }
    // An interval later one request probes the reranker, still refused: one more fallback, no new warning.
    await sleep(PROBE_INTERVAL_MS);
    const probed = await search(stack);
    expect([probed.status, probed.body.reranked]).toEqual([200, false]);
    expect(await fallbackCount(stack, 'RAG_RERANK_UNAVAILABLE')).toBe(before + 6);
    expect(lines.filter((line) => line.level === 'warn')).toEqual([
      { level: 'warn', fields: expect.objectContaining({ dependency: 'rerank', code: 'RAG_RERANK_UNAVAILABLE' }), message: expect.stringContaining('fused ranking') },
    ]);

    await stack.servers.rerank.heal();
    await sleep(PROBE_INTERVAL_MS);
    const back = await search(stack);
    expect(back.body.reranked).toBe(true);
    for (const result of back.body.results) expect(result.score).toBe(rerankScore(QUERY, result.text));
    expect((await search(stack)).body.reranked).toBe(true);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
    expect(lines.filter((line) => line.level === 'info')).toEqual([
      { level: 'info', fields: expect.objectContaining({ dependency: 'rerank', fallbacks: 6 }), message: expect.stringContaining('back') },
    ]);
  });

  it('stops waiting for a hung reranker: one request waits for its timeout, the next ones skip it, one probe per interval', async () => {
    await stack.servers.rerank.fail('hang');
    const first = await search(stack);
    expect([first.status, first.body.reranked]).toEqual([200, false]);
    expect(first.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    const rerankCallsBefore = stack.servers.rerank.fake.requests.length;
    const skipped = await Promise.all(Array.from({ length: 8 }, () => search(stack)));
    for (const { status, body, ms } of skipped) {
      expect([status, body.reranked]).toEqual([200, false]);
      expect(ms).toBeLessThan(TIMEOUT_MS / 2);
    }
    expect(stack.servers.rerank.fake.requests.length).toBe(rerankCallsBefore);
    expect(await fallbackCount(stack, 'RAG_RERANK_TIMEOUT')).toBeGreaterThanOrEqual(9);

    // After the interval one request probes; it waits at most one interval, then answers fused.
    await sleep(PROBE_INTERVAL_MS);
    const [probe, ...others] = await Promise.all(Array.from({ length: 4 }, () => search(stack)));
    for (const { body } of [probe!, ...others]) expect(body.reranked).toBe(false);
    expect(Math.max(probe!.ms, ...others.map(({ ms }) => ms))).toBeLessThan(PROBE_INTERVAL_MS + 400);
    expect(stack.servers.rerank.fake.requests.length).toBe(rerankCallsBefore + 1);

    // Healing ends the hung probe's connection: its retry, or the next probe an interval later, finds the reranker back.
    await stack.servers.rerank.heal();
    await sleep(PROBE_INTERVAL_MS + 50);
    expect((await search(stack)).body.reranked).toBe(true);
  });

  it('does not take a client that closed its request for a reranker outage', async () => {
    await stack.servers.rerank.fail('hang');
    const warnings = lines.filter((line) => line.level === 'warn').length;
    const fallbacks = await fallbackCount(stack);
    const rerankCalls = stack.servers.rerank.fake.requests.length;
    const client = new AbortController();
    const closed = fetch(`${stack.baseUrl}/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: QUERY, k: K }),
      signal: client.signal,
      dispatcher: httpDispatcher,
    }).catch(() => undefined);
    for (const deadline = Date.now() + 5_000; stack.servers.rerank.fake.requests.length === rerankCalls; await sleep(10)) {
      if (Date.now() > deadline) throw new Error('the search never called the reranker');
    }
    client.abort();
    await closed;
    await within(stack.servers.rerank.fake.requests.at(-1)!.clientGone); // the abort reached the reranker call
    await stack.servers.rerank.heal();
    const next = await search(stack); // no probe interval to wait: the circuit never opened
    expect([next.status, next.body.reranked]).toEqual([200, true]);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(warnings);
    expect(await fallbackCount(stack)).toBe(fallbacks);
  });

  it('says reranked false in /chat JSON and in its citations and done events', async () => {
    await stack.servers.rerank.fail('error500');
    const json = await postJson(stack.baseUrl, '/chat', { query: QUERY, k: K });
    expect([json.status, json.body.reranked, json.body.mode]).toEqual([200, false, 'llm']);
    const response = await fetch(`${stack.baseUrl}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: QUERY, k: K }),
    });
    const events = sseEvents(await response.text());
    expect(events[0]).toMatchObject({ event: 'citations', data: { reranked: false } });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { reranked: false, mode: 'llm' } });
    await stack.servers.rerank.heal();
    await sleep(PROBE_INTERVAL_MS);
    const healed = await postJson(stack.baseUrl, '/chat', { query: QUERY, k: K });
    expect([healed.status, healed.body.reranked]).toEqual([200, true]);
  });
});

describe('with RERANK_FALLBACK=fail', () => {
  let stack: ProductionStack;

  beforeAll(async () => {
    stack = await startProductionStack({ timeoutMs: 300, rerankFallback: 'fail' });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('answers 503 RAG_RERANK_UNAVAILABLE while the reranker is down, and reranks as soon as it is back', async () => {
    await stack.servers.rerank.fail('refuse');
    try {
      for (let i = 0; i < 2; i++) {
        const { status, body } = await search(stack);
        expect([status, body.error?.code]).toEqual([503, 'RAG_RERANK_UNAVAILABLE']);
      }
      expect(await fallbackCount(stack, 'RAG_RERANK_UNAVAILABLE')).toBe(0);
    } finally {
      await stack.servers.rerank.heal();
    }
    const { status, body } = await search(stack);
    expect([status, body.reranked]).toEqual([200, true]);
  });
});
