/**
 * /readyz means "this pod can serve /search": with each production dependency down in turn, only the
 * store and the embedder take the pod out of the Service; the reranker and the gateway are reported as
 * degraded. A draining process (SIGTERM) is not ready, whatever its dependencies say.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '../../../packages/core/test/adapters/fake-server.ts';
import { startProductionStack, type Dependency, type ProductionStack } from './production-stack.ts';
import { postJson, readJson } from './test-stack.ts';

const QUERY = 'How many days a week can I work from home?';
const allOk = { store: 'ok', embed: 'ok', rerank: 'ok', gateway: 'ok' };

let stack: ProductionStack;
let draining = false;

beforeAll(async () => {
  stack = await startProductionStack({ timeoutMs: 300, isDraining: () => draining });
});

afterAll(async () => {
  await stack?.close();
});

async function readiness() {
  const response = await within(fetch(`${stack.baseUrl}/readyz`), 10_000);
  return { status: response.status, body: await readJson(response) };
}

const expected: Record<Dependency, { status: number; body: unknown }> = {
  store: {
    status: 503,
    body: {
      error: { code: 'RAG_STORE_UNAVAILABLE', message: expect.stringContaining('Not ready: store.') },
      dependency: 'store',
      checks: { ...allOk, store: 'RAG_STORE_UNAVAILABLE' },
    },
  },
  embed: {
    status: 503,
    body: {
      error: { code: 'RAG_EMBED_UNAVAILABLE', message: expect.stringContaining('Not ready: embed.') },
      dependency: 'embed',
      checks: { ...allOk, embed: 'RAG_EMBED_UNAVAILABLE' },
    },
  },
  rerank: { status: 200, body: { status: 'degraded', checks: { ...allOk, rerank: 'RAG_RERANK_UNAVAILABLE' }, degraded: ['rerank'] } },
  gateway: { status: 200, body: { status: 'degraded', checks: { ...allOk, gateway: 'RAG_GATEWAY_UNAVAILABLE' }, degraded: ['gateway'] } },
};

describe('/readyz with each dependency down in turn', () => {
  it('is ready with every dependency up', async () => {
    expect(await readiness()).toEqual({ status: 200, body: { status: 'ready', checks: allOk } });
  });

  it.each(Object.keys(expected) as Dependency[])('%s down', async (dependency) => {
    await stack.servers[dependency].fail('refuse');
    try {
      expect(await readiness()).toEqual(expected[dependency]);
      // What readiness promises: a pod it keeps in the Service can serve /search.
      const search = await within(postJson(stack.baseUrl, '/search', { query: QUERY, k: 1 }), 10_000);
      expect(search.status).toBe(expected[dependency].status === 200 ? 200 : 503);
    } finally {
      await stack.servers[dependency].heal();
    }
  });

  it('reports every failing dependency, the blocking ones first in dependency, the others in degraded', async () => {
    await stack.servers.embed.fail('refuse');
    await stack.servers.gateway.fail('refuse');
    try {
      const { status, body } = await readiness();
      expect([status, body.dependency, body.error.message]).toEqual([503, 'embed', expect.stringContaining('Not ready: embed.')]);
      expect(body.checks).toEqual({ ...allOk, embed: 'RAG_EMBED_UNAVAILABLE', gateway: 'RAG_GATEWAY_UNAVAILABLE' });
    } finally {
      await stack.servers.embed.heal();
      await stack.servers.gateway.heal();
    }
  });
});

describe('/readyz while the process drains', () => {
  it('answers 503 RAG_SHUTTING_DOWN at once, without asking the dependencies, while requests are still served', async () => {
    const callsBefore = stack.servers.store.fake.requests.length + stack.servers.embed.fake.requests.length;
    draining = true;
    try {
      const { status, body } = await readiness();
      expect(status).toBe(503);
      expect(body).toEqual({ error: { code: 'RAG_SHUTTING_DOWN', message: 'The server is shutting down; retry on another replica.' } });
      expect(stack.servers.store.fake.requests.length + stack.servers.embed.fake.requests.length).toBe(callsBefore);
      const search = await postJson(stack.baseUrl, '/search', { query: QUERY, k: 1 });
      expect(search.status).toBe(200);
    } finally {
      draining = false;
    }
    expect((await readiness()).status).toBe(200);
  });
});
