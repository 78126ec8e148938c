/**
 * /readyz needs no key, so its checks are shared: probes that arrive together share one round of
 * dependency calls, and a round answers for READINESS_CACHE_MS after it ends. Counted at the fake TEI,
 * whose `GET /health` is the embed check (https://huggingface.github.io/text-embeddings-inference/#/Health).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '../../../packages/core/test/adapters/fake-server.ts';
import { READINESS_CACHE_MS } from '../src/routes/health.ts';
import { startProductionStack, type ProductionStack } from './production-stack.ts';

const PROBES = 20;

let stack: ProductionStack;

beforeAll(async () => {
  stack = await startProductionStack({ readinessCacheMs: READINESS_CACHE_MS });
});

afterAll(async () => {
  await stack?.close();
});

function healthCalls(): number {
  return stack.servers.embed.fake.requests.filter((request) => request.method === 'GET' && request.path === '/health').length;
}

async function readyStatuses(count: number): Promise<number[]> {
  return within(Promise.all(Array.from({ length: count }, async () => (await fetch(`${stack.baseUrl}/readyz`)).status)), 15_000);
}

describe('/readyz under many probes', () => {
  it('sends one health call for probes that arrive together, and a new one once the answer is older than the cache', async () => {
    const before = healthCalls();
    expect(await readyStatuses(PROBES)).toEqual(new Array(PROBES).fill(200));
    expect(healthCalls() - before).toBe(1);

    await new Promise((resolve) => setTimeout(resolve, READINESS_CACHE_MS + 200));
    expect(await readyStatuses(1)).toEqual([200]);
    expect(healthCalls() - before).toBe(2);
  });
});
