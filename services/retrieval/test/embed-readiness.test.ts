/**
 * A CPU TEI busy with long batches answers `GET /health` late (it goes through the model's queue:
 * https://huggingface.github.io/text-embeddings-inference/#/Health), while the API's own embedding calls
 * still succeed. /readyz then trusts a success of the last minute instead of a 3 s probe, and probes
 * only when the API has been idle.
 */
import { TeiEmbedder, type VectorStore } from '@rag/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakeServers, startFakeServer, type FakeServer } from '../../../packages/core/test/adapters/fake-server.ts';
import { EMBED_SUCCESS_FRESH_MS, EmbedActivity } from '../src/embed-activity.ts';
import { readinessChecks } from '../src/readiness-checks.ts';
import { registerHealthRoutes } from '../src/routes/health.ts';
import type { OpenGate } from '../src/store-gate.ts';
import { teiEmbed, teiError } from './fakes/fake-tei.ts';

let now = 1_000_000;
let embeddingsFail = false;
let tei: FakeServer;
let app: FastifyInstance;
let baseUrl: string;
let embedder: TeiEmbedder | ReturnType<EmbedActivity['track']>;

beforeAll(async () => {
  // /health never answers (a long batch ahead of it); /v1/embeddings answers, or fails on demand.
  tei = await startFakeServer((request, response) => {
    if (request.path === '/health') return new Promise<void>(() => undefined);
    if (embeddingsFail) return teiError(response, 503, 'Model is overloaded', 'overloaded');
    return teiEmbed(request, response);
  });
  const activity = new EmbedActivity(() => now);
  embedder = activity.track(new TeiEmbedder({ url: tei.url, model: 'fake/hashed-bag-of-words', timeoutMs: 5_000, retries: 0 }));
  const ready = { ready: async () => undefined } as unknown as OpenGate;
  const store = { checkReady: async () => undefined } as unknown as VectorStore;
  const checks = readinessChecks({ gate: ready, store, embedder, embedActivity: activity }).filter((check) => check.name === 'embed');
  app = Fastify();
  registerHealthRoutes(app, checks, { cacheMs: 0 });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
  await closeFakeServers();
});

const healthProbes = () => tei.requests.filter((request) => request.path === '/health').length;

async function readyz(): Promise<{ status: number; body: { checks?: Record<string, string> } }> {
  const response = await fetch(`${baseUrl}/readyz`);
  return { status: response.status, body: (await response.json()) as { checks?: Record<string, string> } };
}

describe('/readyz with a slow embedding server', () => {
  it('probes TEI when the API is idle, and a health answer later than 3 s takes the pod out', async () => {
    const { status, body } = await readyz();
    expect(status).toBe(503);
    expect(body.checks?.embed).toBe('RAG_EMBED_TIMEOUT');
    expect(healthProbes()).toBe(1);
  }, 15_000);

  it('stays ready without probing while query embeddings succeeded within the last minute', async () => {
    await embedder.embedQuery('how do I rotate the keys?');
    now += EMBED_SUCCESS_FRESH_MS - 1;
    const before = healthProbes();
    expect((await readyz()).status).toBe(200);
    expect(healthProbes()).toBe(before);
  });

  it('probes again once the last success is a minute old', async () => {
    now += 1;
    const before = healthProbes();
    expect((await readyz()).status).toBe(503);
    expect(healthProbes()).toBe(before + 1);
  }, 15_000);

  it('does not count a failed embedding call as a success', async () => {
    embeddingsFail = true;
    await expect(embedder.embedQuery('anything')).rejects.toThrow();
    embeddingsFail = false;
    expect((await readyz()).status).toBe(503);
  }, 15_000);
});
