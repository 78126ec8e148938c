/**
 * The gateway adapter (OpenAiGatewayChatModel, GATEWAY_URL) through a real Envoy 1.40 (test/real/envoy.ts) in
 * front of a real llama-server serving SmolLM2-135M-Instruct (pnpm models:fetch; greedy decoding, a 256-token
 * cap, 2 threads: scripts/llm/llama-server.ts), as the seed's stack puts Envoy in front of its model tiers.
 *
 * Envoy facts relied on (checked against Envoy's docs, see test/real/envoy.ts, and measured here with 1.40):
 *   - upstream down: Envoy answers 503 text/plain "upstream connect error or disconnect/reset before headers.
 *     reset reason: remote connection failure"; a cluster with no host: 503 text/plain "no healthy upstream";
 *   - a route timeout that passes before the answer's headers: 504 text/plain "upstream request timeout";
 *   - retry_on 5xx retries a 5xx or a reset before the answer started; once the answer's headers went downstream
 *     Envoy cannot retry: an upstream reset mid-stream resets the downstream connection.
 * llama-server facts (scripts/llm/llama-server.ts, tools/server/README.md): GET /slots lists `is_processing`,
 * GET /metrics (--metrics) counts llamacpp:tokens_predicted_total; a streamed request whose client disconnects
 * is cancelled. Measured here: a non-streamed request is NOT cancelled when Envoy's route timeout answers 504
 * (the model ran on to its 256-token cap), so the 504 case below caps its request at a few tokens.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlamaServer, unservableReason, type RunningServer } from '../../../../scripts/llm/llama-server.ts';
import { OpenAiGatewayChatModel, type OpenAiGatewayOptions } from '../../src/chat/openai-gateway.ts';
import type { ChatMessage, ChatStreamEvent } from '../../src/chat/chat-model.ts';
import { RagError } from '../../src/errors.ts';
import { envoyMissingReason, startEnvoy, type RunningEnvoy } from '../real/envoy.ts';
import { freePort } from '../real/free-ports.ts';
import { realComponentSkipReason } from '../real/real-components.ts';

const MODEL = 'smollm2-135m-instruct';
const skip = realComponentSkipReason('Envoy in front of llama-server', envoyMissingReason() ?? unservableReason(MODEL));

/** A short answer (about 25 tokens with this model), so that whole completions stay cheap on 2 shared cores. */
const SHORT: ChatMessage[] = [{ role: 'user', content: 'Say hello.' }];
/** Left alone, this one runs to the 256-token cap. */
const LONG: ChatMessage[] = [{ role: 'user', content: 'Write a long story about a dragon.' }];

let llama: RunningServer;
let envoy: RunningEnvoy;
let flaky: FlakyUpstream;
/** SHORT answered by llama-server directly, streamed, without Envoy: what one completion is. */
let reference: string;

beforeAll(async () => {
  if (skip) return;
  llama = await startLlamaServer(MODEL, { threads: 2 });
  const llamaPort = Number(new URL(llama.url).port);
  flaky = await startFlakyUpstream(llamaPort);
  envoy = await startEnvoy({
    clusters: [
      { name: 'llama', port: llamaPort },
      { name: 'flaky', port: flaky.port },
      { name: 'down', port: await freePort([llamaPort, flaky.port]) },
      { name: 'empty', port: undefined },
    ],
    routes: [
      { prefix: '/down/', cluster: 'down', timeout: '0s' },
      { prefix: '/empty/', cluster: 'empty', timeout: '0s' },
      // Shorter than any generation: 48 tokens take well over 20 ms even for this model on an idle machine.
      { prefix: '/short-timeout/', cluster: 'llama', timeout: '0.02s' },
      { prefix: '/retrying/', cluster: 'flaky', timeout: '0s', retry: { retryOn: '5xx', numRetries: 2 } },
      // The gateway route: Envoy's default route timeout (15 s) would cut long completions, so it is off here.
      { prefix: '/', cluster: 'llama', timeout: '0s' },
    ],
  });
  reference = textOf(await collect(gateway({ url: llama.url }).stream(SHORT)));
});

afterAll(async () => {
  await flaky?.close();
  const envoyCode = await envoy?.stop();
  const llamaCode = await llama?.stop();
  if (!skip) expect([envoyCode, llamaCode]).toEqual([0, 0]);
});

function gateway(options: Partial<OpenAiGatewayOptions> = {}): OpenAiGatewayChatModel {
  return new OpenAiGatewayChatModel({ url: envoy?.url ?? '', model: MODEL, apiKey: llama?.apiKey, timeoutMs: 600_000, minBackoffMs: 5, ...options });
}

async function collect(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const all: ChatStreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

function textOf(events: ChatStreamEvent[]): string {
  return events.map((event) => (event.type === 'token' ? event.text : '')).join('');
}

async function failureOf(promise: Promise<unknown>): Promise<RagError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(RagError);
  return error as RagError;
}

async function predictedTokens(): Promise<number> {
  const text = await (await fetch(`${llama.url}/metrics`, { headers: { authorization: `Bearer ${llama.apiKey}` } })).text();
  return Number(/^llamacpp:tokens_predicted_total (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
}

async function processing(): Promise<boolean> {
  return ((await (await fetch(`${llama.url}/slots`, { headers: { authorization: `Bearer ${llama.apiKey}` } })).json()) as Array<{ is_processing: boolean }>).some((slot) => slot.is_processing);
}

async function untilIdle(): Promise<void> {
  while (await processing()) await new Promise((resolve) => setTimeout(resolve, 200));
}

describe.skipIf(skip)('the gateway adapter through a real Envoy in front of llama-server', () => {
  it('streams through Envoy: several token events, relayed as they come, the same text as without Envoy, then done with the usage', async () => {
    const times: number[] = [];
    const events: ChatStreamEvent[] = [];
    for await (const event of gateway().stream(SHORT)) {
      events.push(event);
      if (event.type === 'token') times.push(Math.round(performance.now()));
    }
    expect(times.length).toBeGreaterThan(3);
    // A buffered answer would reach the adapter in one piece, every token in the same millisecond.
    expect(new Set(times).size).toBeGreaterThan(2);
    expect(textOf(events)).toBe(reference);
    const done = events.at(-1)!;
    expect(done.type).toBe('done');
    expect(done.type === 'done' && done.usage?.completionTokens).toBeGreaterThan(0);
  });

  it('a client that goes away stops the generation upstream: the first token arrives while the model still runs, and it stops within a few tokens of the abort', async () => {
    await untilIdle();
    const before = await predictedTokens();
    const aborter = new AbortController();
    const stream = gateway().stream(LONG, aborter.signal)[Symbol.asyncIterator]();
    let first = await stream.next();
    while (!first.done && first.value.type !== 'token') first = await stream.next();
    expect(first.value).toMatchObject({ type: 'token' });
    // Envoy relayed this token before the generation ended: it does not buffer the answer.
    expect(await processing()).toBe(true);
    aborter.abort();
    // Events already read may still come out; then the read that the abort cut fails.
    const error = await failureOf((async () => {
      while (!(await stream.next()).done);
    })());
    expect(error.code).toBe('RAG_CLIENT_CLOSED');
    await untilIdle();
    // Left alone, this prompt runs to the 256-token cap.
    expect((await predictedTokens()) - before).toBeLessThan(64);
  });

  it("Envoy's 503 with the upstream down (plain text, not JSON) becomes RAG_GATEWAY_UNAVAILABLE, for a completion, a stream and the readiness probe", async () => {
    const down = gateway({ url: `${envoy.url}/down`, retries: 0 });
    for (const attempt of [() => down.complete(SHORT), () => collect(down.stream(SHORT)), () => down.checkReady()]) {
      const error = await failureOf(attempt());
      expect(error.code).toBe('RAG_GATEWAY_UNAVAILABLE');
      expect(error.status).toBe(503);
      // Read as a status and its text: not a JSON parse failure of the body.
      expect(error.cause).toMatchObject({ name: 'HttpStatusError', status: 503 });
      expect(error.message).toContain('HTTP 503: upstream connect error or disconnect/reset before headers');
    }
    const empty = await failureOf(gateway({ url: `${envoy.url}/empty`, retries: 0 }).complete(SHORT));
    expect(empty.code).toBe('RAG_GATEWAY_UNAVAILABLE');
    expect(empty.message).toContain('HTTP 503: no healthy upstream');
  });

  it("the adapter retries Envoy's 503 itself (its own bounded retries) and still names the code", async () => {
    const before = await envoy.stat('cluster.down.upstream_cx_connect_fail');
    const error = await failureOf(gateway({ url: `${envoy.url}/down`, retries: 2 }).complete(SHORT));
    expect(error.code).toBe('RAG_GATEWAY_UNAVAILABLE');
    expect((await envoy.stat('cluster.down.upstream_cx_connect_fail')) - before).toBe(3);
  });

  it("Envoy's 504 on a route timeout shorter than the generation (plain text) becomes RAG_GATEWAY_TIMEOUT, not retried", async () => {
    await untilIdle();
    const before = await envoy.stat('cluster.llama.upstream_rq_timeout');
    const error = await failureOf(gateway({ url: `${envoy.url}/short-timeout` }).complete(LONG, undefined, { maxTokens: 48 }));
    expect(error.code).toBe('RAG_GATEWAY_TIMEOUT');
    expect(error.status).toBe(504);
    expect(error.cause).toMatchObject({ name: 'HttpStatusError', status: 504 });
    expect(error.message).toContain('HTTP 504: upstream request timeout');
    expect((await envoy.stat('cluster.llama.upstream_rq_timeout')) - before).toBe(1);
    await untilIdle();
  });

  it('Envoy retries (retry_on 5xx) before the answer starts, and the streamed answer arrives once, equal to one completion', async () => {
    flaky.plan(['503', 'reset']);
    const before = await envoy.stat('cluster.flaky.upstream_rq_retry');
    const events = await collect(gateway({ url: `${envoy.url}/retrying`, retries: 0 }).stream(SHORT));
    expect(flaky.requests()).toBe(3);
    expect((await envoy.stat('cluster.flaky.upstream_rq_retry')) - before).toBe(2);
    expect(textOf(events)).toBe(reference);
    expect(events.filter((event) => event.type === 'done')).toHaveLength(1);
  });

  it('an upstream that fails mid-stream is not retried by Envoy (retry_on 5xx) nor by the adapter: no answer twice, a named error', async () => {
    await untilIdle();
    flaky.plan(['cut']);
    const before = await envoy.stat('cluster.flaky.upstream_rq_retry');
    const events: ChatStreamEvent[] = [];
    const error = await failureOf(
      (async () => {
        for await (const event of gateway({ url: `${envoy.url}/retrying`, retries: 2 }).stream(SHORT)) events.push(event);
      })(),
    );
    expect(error.code).toBe('RAG_GATEWAY_UNAVAILABLE');
    expect(flaky.requests()).toBe(1);
    expect((await envoy.stat('cluster.flaky.upstream_rq_retry')) - before).toBe(0);
    const text = textOf(events);
    expect(text.length).toBeGreaterThan(0);
    expect(reference.startsWith(text)).toBe(true);
    expect(text.length).toBeLessThan(reference.length);
    expect(events.some((event) => event.type === 'done')).toBe(false);
  });
});

/**
 * An upstream between Envoy and llama-server that fails on purpose, one planned behaviour per request, then
 * passes requests through: '503' answers 503 text/plain; 'reset' closes the connection before any answer; 'cut'
 * forwards the streamed answer and closes the connection once the first token event went through.
 */
interface FlakyUpstream {
  port: number;
  plan(behaviours: Array<'503' | 'reset' | 'cut'>): void;
  /** Requests received since the last plan. */
  requests(): number;
  close(): Promise<void>;
}

async function startFlakyUpstream(targetPort: number): Promise<FlakyUpstream> {
  let planned: string[] = [];
  let received = 0;
  const server: Server = createServer((incoming, response) => {
    received += 1;
    const behaviour = planned.shift() ?? 'pass';
    if (behaviour === '503') {
      incoming.resume();
      response.writeHead(503, { 'content-type': 'text/plain' }).end('overloaded');
      return;
    }
    if (behaviour === 'reset') {
      incoming.socket.destroy();
      return;
    }
    const upstream = httpRequest({ host: '127.0.0.1', port: targetPort, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      let seen = '';
      answer.on('data', (chunk: Buffer) => {
        response.write(chunk);
        seen += chunk.toString('utf8');
        if (behaviour === 'cut' && /"content":"[^"]+"/.test(seen)) {
          answer.destroy();
          // Let the token reach Envoy before the connection goes.
          setTimeout(() => response.socket?.destroy(), 50);
        }
      });
      answer.on('end', () => response.end());
    });
    upstream.on('error', () => response.socket?.destroy());
    incoming.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    plan(behaviours) {
      planned = [...behaviours];
      received = 0;
    },
    requests: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
