/**
 * A client that goes away from POST /mcp stops the tool call's own dependency calls: the `ask` tool's
 * gateway request is closed, instead of running until its own deadline. The SDK aborts each handler's
 * `extra.signal` when its transport closes (Protocol._onclose, @modelcontextprotocol/sdk 1.32
 * shared/protocol.js), and the route closes the transport when the HTTP response closes.
 */
import type { RecordedRequest } from '../../../packages/core/test/adapters/fake-server.ts';
import { within } from '../../../packages/core/test/adapters/fake-server.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProductionStack, type ProductionStack } from './production-stack.ts';

/** Far beyond the wait below: a gateway call that ends does so because the client left, not by its own deadline. */
const DEPENDENCY_TIMEOUT_MS = 120_000;
const WAIT_MS = 15_000;

let stack: ProductionStack;

beforeAll(async () => {
  stack = await startProductionStack({ timeoutMs: DEPENDENCY_TIMEOUT_MS });
});

afterAll(async () => {
  await stack?.servers.gateway.heal();
  await stack?.close();
});

async function gatewayCall(): Promise<RecordedRequest> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const call = stack.servers.gateway.fake.requests.find((request) => request.method === 'POST' && request.path === '/v1/chat/completions');
    if (call) return call;
    if (Date.now() > deadline) throw new Error('the ask tool never called the gateway');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('/mcp when the client goes away', () => {
  it('closes the ask tool\'s gateway call', async () => {
    await stack.servers.gateway.fail('hang');
    const client = new AbortController();
    const ask = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: { question: 'How many days a week can I work from home?' } } };
    const posted = fetch(`${stack.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(ask),
      signal: client.signal,
    }).catch((error: unknown) => error);

    const call = await gatewayCall();
    client.abort();
    expect(await posted).toMatchObject({ name: 'AbortError' });
    await expect(within(call.clientGone, WAIT_MS)).resolves.toBeUndefined();
  });
});
