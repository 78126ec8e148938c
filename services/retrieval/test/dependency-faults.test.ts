/**
 * Each production dependency failing in each way a network service fails: the user gets a 503 (504 for a
 * timeout) naming it, or for the reranker the fused ranking, never a hang or a stack trace; /readyz
 * names it and fails only for what /search needs (store, embedder); the same app answers normally again
 * as soon as it is back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, startFakeServer, within } from '../../../packages/core/test/adapters/fake-server.ts';
import { FakeQdrant } from './fakes/fake-qdrant.ts';
import { FAKE_EMBED_DIMENSION, teiEmbed } from './fakes/fake-tei.ts';
import type { Fault } from './fakes/fault-switch.ts';
import { startProductionStack, type Dependency, type ProductionStack } from './production-stack.ts';
import { postJson, readJson } from './test-stack.ts';

/** Adapter deadlines in this suite; every failure must show well inside the did-not-hang bound. */
const TIMEOUT_MS = 300;
/** How often a request tries a reranker that is down. */
const RERANK_PROBE_INTERVAL_MS = 200;
const DID_NOT_HANG_MS = 10_000;
const QUERY = 'How many days a week can I work from home?';

let stack: ProductionStack;

beforeAll(async () => {
  stack = await startProductionStack({ timeoutMs: TIMEOUT_MS, rerankProbeIntervalMs: RERANK_PROBE_INTERVAL_MS });
});

afterAll(async () => {
  await stack?.close();
});

/** /chat reaches the gateway; /search exercises the other three (k = 1 so that the reranker runs). */
function routeFor(dependency: Dependency): string {
  return dependency === 'gateway' ? '/chat' : '/search';
}

function ask(baseUrl: string, dependency: Dependency) {
  return within(postJson(baseUrl, routeFor(dependency), { query: QUERY, k: 1 }), DID_NOT_HANG_MS);
}

async function readiness(baseUrl: string) {
  const response = await within(fetch(`${baseUrl}/readyz`), DID_NOT_HANG_MS);
  return { status: response.status, body: await readJson(response) };
}

function codeFor(dependency: Dependency, fault: Fault): string {
  return `RAG_${dependency.toUpperCase()}_${fault === 'hang' ? 'TIMEOUT' : 'UNAVAILABLE'}`;
}

function expectNoStackTrace(body: unknown): void {
  const text = JSON.stringify(body);
  expect(text).not.toMatch(/\bat .+\(.+:\d+:\d+\)/);
  expect(text).not.toMatch(/\\n\s+at /);
  expect(text).not.toContain('node_modules');
}

const faults: Fault[] = ['refuse', 'hang', 'error500', 'garbage'];
const allOk = { store: 'ok', embed: 'ok', rerank: 'ok', gateway: 'ok' };

/**
 * A health route has no body to garble, so readiness is only asked to notice the other faults (the
 * gateway's probe, GET /v1/models, reads a body and notices it too).
 */
function readinessNotices(dependency: Dependency, fault: Fault): boolean {
  return fault !== 'garbage' || dependency === 'store' || dependency === 'gateway';
}

describe.each(['embed', 'store'] as const)('when %s fails', (dependency) => {
  it.each(faults)(`%s: /search and /readyz answer a named 503/504, then normal answers once it is back`, async (fault) => {
    await stack.servers[dependency].fail(fault);
    try {
      const failed = await ask(stack.baseUrl, dependency);
      expect(failed.status).toBe(fault === 'hang' ? 504 : 503);
      expect(failed.body.error.code).toBe(codeFor(dependency, fault));
      expectNoStackTrace(failed.body);
      if (readinessNotices(dependency, fault)) {
        const ready = await readiness(stack.baseUrl);
        expect(ready.status).toBe(503);
        expect(ready.body.dependency).toBe(dependency);
        expect(ready.body.checks[dependency]).toBe(codeFor(dependency, fault));
        expectNoStackTrace(ready.body);
      }
    } finally {
      await stack.servers[dependency].heal();
    }
    const healed = await ask(stack.baseUrl, dependency);
    expect(healed.status).toBe(200);
    expect(await readiness(stack.baseUrl)).toEqual({ status: 200, body: { status: 'ready', checks: allOk } });
  });
});

describe('when rerank fails', () => {
  it.each(faults)(`%s: /search answers the fused ranking (reranked false), /readyz stays 200 degraded, reranking resumes once it is back`, async (fault) => {
    await stack.servers.rerank.fail(fault);
    try {
      const degraded = await ask(stack.baseUrl, 'rerank');
      expect(degraded.status).toBe(200);
      expect(degraded.body.reranked).toBe(false);
      expect(degraded.body.results).toHaveLength(1);
      expect(degraded.body.results[0].score).toBe(degraded.body.results[0].fusion_score);
      if (readinessNotices('rerank', fault)) {
        const ready = await readiness(stack.baseUrl);
        expect(ready).toEqual({ status: 200, body: { status: 'degraded', checks: { ...allOk, rerank: codeFor('rerank', fault) }, degraded: ['rerank'] } });
      }
    } finally {
      await stack.servers.rerank.heal();
    }
    await sleep(RERANK_PROBE_INTERVAL_MS);
    const healed = await ask(stack.baseUrl, 'rerank');
    expect([healed.status, healed.body.reranked]).toEqual([200, true]);
    expect(await readiness(stack.baseUrl)).toEqual({ status: 200, body: { status: 'ready', checks: allOk } });
  });
});

describe('when gateway fails', () => {
  it.each(faults)(`%s: /chat answers a named 503/504 while /search answers 200 and /readyz stays 200 degraded`, async (fault) => {
    await stack.servers.gateway.fail(fault);
    try {
      const failed = await ask(stack.baseUrl, 'gateway');
      expect(failed.status).toBe(fault === 'hang' ? 504 : 503);
      expect(failed.body.error.code).toBe(codeFor('gateway', fault));
      expectNoStackTrace(failed.body);
      const search = await within(postJson(stack.baseUrl, '/search', { query: QUERY, k: 1 }), DID_NOT_HANG_MS);
      expect([search.status, search.body.reranked, search.body.results.length]).toEqual([200, true, 1]);
      const ready = await readiness(stack.baseUrl);
      expect(ready).toEqual({ status: 200, body: { status: 'degraded', checks: { ...allOk, gateway: codeFor('gateway', fault) }, degraded: ['gateway'] } });
    } finally {
      await stack.servers.gateway.heal();
    }
    const healed = await ask(stack.baseUrl, 'gateway');
    expect(healed.status).toBe(200);
    expect(await readiness(stack.baseUrl)).toEqual({ status: 200, body: { status: 'ready', checks: allOk } });
  });
});

describe('a service started while Qdrant is down', () => {
  it('answers 503 RAG_STORE_UNAVAILABLE, then opens the store on the first request after Qdrant is back', async () => {
    await stack.servers.store.fail('refuse');
    let baseUrl: string;
    try {
      baseUrl = await stack.startAnotherApp();
      const failed = await ask(baseUrl, 'store');
      expect([failed.status, failed.body.error.code]).toEqual([503, 'RAG_STORE_UNAVAILABLE']);
      const ready = await readiness(baseUrl);
      expect([ready.status, ready.body.dependency]).toEqual([503, 'store']);
    } finally {
      await stack.servers.store.heal();
    }
    const healed = await ask(baseUrl, 'store');
    expect(healed.status).toBe(200);
    expect(healed.body.results).toHaveLength(1);
  });
});

/** A port that is free now: listen on 0, read the port, close. */
function waitForOutput(child: ChildProcess, pattern: RegExp, output: { text: string }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onData = (data: Buffer) => {
      output.text += data.toString();
      if (pattern.test(output.text)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output.text}`)));
  });
}

function spawnServer(env: Record<string, string | undefined>): ChildProcess {
  const repoRoot = new URL('../../../', import.meta.url).pathname;
  const base = { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  return spawn('pnpm', ['exec', 'tsx', 'services/retrieval/src/server.ts'], { cwd: repoRoot, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

function exitOf(child: ChildProcess, output: { text: string }): Promise<number | null> {
  child.stdout!.on('data', (data: Buffer) => (output.text += data.toString()));
  child.stderr!.on('data', (data: Buffer) => (output.text += data.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('the real server process with a collection built by another model', () => {
  it('stops at startup with RAG_MODEL_MISMATCH and exit code 1: a wrong model is not transient', async () => {
    const qdrant = new FakeQdrant();
    qdrant.collections.set('docs-v2', {
      config: {
        params: { vectors: { dense: { size: FAKE_EMBED_DIMENSION, distance: 'Cosine' } }, sparse_vectors: { bm25: { modifier: 'idf' } } },
        metadata: { embedding_model: 'other-model', embedding_dimension: FAKE_EMBED_DIMENSION },
      },
      points: new Map(),
      payloadIndexes: new Map(),
    });
    const qdrantServer = await startFakeServer(qdrant.handle);
    const embedServer = await startFakeServer(teiEmbed);
    const output = { text: '' };
    const child = spawnServer({ PORT: '0', QDRANT_URL: qdrantServer.url, EMBED_URL: embedServer.url, EMBED_MODEL: 'my-model' });
    expect(await within(exitOf(child, output), 30_000)).toBe(1);
    expect(output.text).toContain('RAG_MODEL_MISMATCH');
    expect(output.text).toContain('was built with other-model');
    expect(output.text).not.toContain('listening on');
  });
});

describe('the real server process with every dependency on a closed port', () => {
  let child: ChildProcess | undefined;
  const output = { text: '' };
  let baseUrl = '';
  let embedUrl = '';

  beforeAll(async () => {
    embedUrl = await closedPortUrl();
    // PORT=0: the server binds a free port itself and prints it; a port picked here and released could be taken meanwhile.
    child = spawnServer({
      PORT: '0',
      QDRANT_URL: await closedPortUrl(),
      EMBED_URL: embedUrl,
      RERANK_URL: await closedPortUrl(),
      GATEWAY_URL: await closedPortUrl(),
    });
    await within(waitForOutput(child, /listening on http:\/\/[\d.]+:\d+ /, output), 30_000);
    baseUrl = /listening on (http:\/\/[\d.]+:\d+) /.exec(output.text)![1]!;
  });

  afterAll(async () => {
    // A server gone before its tests ended says why here, not only as a refused connection.
    if (child && (child.exitCode !== null || child.signalCode !== null)) console.error(`the server exited early (${child.exitCode ?? child.signalCode}):\n${output.text}`);
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await within(exited, 10_000).catch(() => child!.kill('SIGKILL'));
    }
  });

  it('starts anyway, warning which dependency it could not reach', () => {
    expect(output.text).toMatch(/"level":40.*embedding server \(EMBED_URL\) is not available at startup/);
    expect(output.text).toContain('store not reachable yet');
  });

  it('answers /search with 503 RAG_EMBED_UNAVAILABLE', async () => {
    const { status, body } = await within(postJson(baseUrl, '/search', { query: QUERY }), DID_NOT_HANG_MS);
    expect([status, body.error.code]).toEqual([503, 'RAG_EMBED_UNAVAILABLE']);
    expectNoStackTrace(body);
  });

  it('tells the client the code and the dependency; the endpoint and the network error only to the log', async () => {
    const { host } = new URL(embedUrl);
    const search = await within(postJson(baseUrl, '/search', { query: QUERY }), DID_NOT_HANG_MS);
    const openAi = await within(postJson(baseUrl, '/v1/chat/completions', { model: 'rag', messages: [{ role: 'user', content: QUERY }] }), DID_NOT_HANG_MS);
    expect([search.status, search.body.error.code, openAi.status, openAi.body.error.code]).toEqual([503, 'RAG_EMBED_UNAVAILABLE', 503, 'RAG_EMBED_UNAVAILABLE']);
    for (const body of [search.body, openAi.body]) {
      expect(body.error.message).toMatch(/^The embedding server is unreachable or failing\./);
      const text = JSON.stringify(body);
      for (const internal of [host, 'http://', 'ECONNREFUSED', 'unreachable:']) expect(text).not.toContain(internal);
    }
    await expect.poll(() => output.text.split('\n').filter((line) => line.includes('dependency unavailable') && line.includes(host) && line.includes('ECONNREFUSED')).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
  });

  it('answers /readyz with 503 naming the store first and every dependency in checks', async () => {
    const { status, body } = await readiness(baseUrl);
    expect(status).toBe(503);
    expect(body.error.code).toBe('RAG_STORE_UNAVAILABLE');
    expect(body.dependency).toBe('store');
    expect(body.checks).toEqual({
      store: 'RAG_STORE_UNAVAILABLE',
      embed: 'RAG_EMBED_UNAVAILABLE',
      rerank: 'RAG_RERANK_UNAVAILABLE',
      gateway: 'RAG_GATEWAY_UNAVAILABLE',
    });
  });
});
