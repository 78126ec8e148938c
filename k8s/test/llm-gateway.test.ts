/**
 * The LLM gateway (issue 42, item 4; k8s/rag/components/llm-gateway): Envoy in front of the CPU model server
 * (components/llm-cpu), as the seed's stack puts Envoy in front of its tiers. Rendered as overlays/gke-llm renders it
 * (the configured gke overlay, llm-cpu, llm-gateway: the kubectl path) and in the GitOps example with both components
 * listed: valid objects, a pod that meets the restricted Pod Security profile (the checks of llm-cpu.test.ts and
 * policy.test.ts), the bootstrap's routes, timeouts, retries and admin address as the component's comments state them,
 * the API pointed at the gateway, and the paths API/ingest → gateway → llm-cpu only, evaluated flow by flow
 * (network-policies.ts). The bootstrap itself runs in the real Envoy in llm-gateway-envoy.real.test.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatewayBootstrap, gkeLlm } from './llm-gateway.ts';
import { inRag, networkOf, type Peer } from './network-policies.ts';
import { forPods, podGroups, unplaced } from './pool-fit.ts';
import { configuredOverlay, gitopsAfter, kustomize, kustomizeUnavailable, type Manifest, podSpecOf } from './render.ts';
import { schemaErrors } from './schema.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const google: Peer = { namespace: '', ip: '142.250.0.1' };
const client: Peer = { namespace: 'default', app: 'some-client' };
const kubeDns: Peer = { namespace: 'kube-system', app: 'kube-dns' };
const policiesOf = (objects: Manifest[]) => objects.filter((object) => object.kind === 'NetworkPolicy');
const find = (objects: Manifest[], kind: string, name: string): Manifest => objects.find((object) => object.kind === kind && object.metadata.name === name);
const container = (workload: Manifest, name: string): Manifest => podSpecOf(workload).containers.find((candidate: Manifest) => candidate.name === name);
/** A protobuf JSON Duration ("300s", "0.5s") in seconds. */
const seconds = (duration: string): number => Number(/^(\d+(?:\.\d+)?)s$/.exec(duration)?.[1] ?? Number.NaN);

/** The environment the API's container sees: its ConfigMaps (envFrom), then its own env, which wins. */
function apiEnvironment(objects: Manifest[]): Record<string, string> {
  const api = container(find(objects, 'Deployment', 'retrieval'), 'retrieval');
  const values: Record<string, string> = {};
  for (const source of api.envFrom ?? []) Object.assign(values, find(objects, 'ConfigMap', source.configMapRef?.name)?.data ?? {});
  for (const variable of api.env ?? []) values[variable.name] = variable.value ?? `secret:${variable.valueFrom?.secretKeyRef?.name}/${variable.valueFrom?.secretKeyRef?.key}`;
  return values;
}

/** The checks policy.test.ts makes of every base container: restricted Pod Security, resources, writable volumes. */
function restrictedErrors(workload: Manifest): string[] {
  const pod = podSpecOf(workload);
  const errors: string[] = [];
  const effective = (item: Manifest, field: string) => item.securityContext?.[field] ?? pod.securityContext?.[field];
  for (const item of [...(pod.initContainers ?? []), ...pod.containers]) {
    if (effective(item, 'runAsNonRoot') !== true) errors.push(`${item.name}: runAsNonRoot`);
    if (!(Number(effective(item, 'runAsUser')) > 0)) errors.push(`${item.name}: runAsUser`);
    if (item.securityContext?.allowPrivilegeEscalation !== false) errors.push(`${item.name}: allowPrivilegeEscalation`);
    if (!item.securityContext?.capabilities?.drop?.includes('ALL')) errors.push(`${item.name}: capabilities`);
    if (item.securityContext?.readOnlyRootFilesystem !== true) errors.push(`${item.name}: readOnlyRootFilesystem`);
    if (effective(item, 'seccompProfile')?.type !== 'RuntimeDefault') errors.push(`${item.name}: seccomp`);
    if (!item.resources?.requests?.memory || !item.resources?.limits?.memory || !item.resources?.requests?.cpu) errors.push(`${item.name}: resources`);
  }
  for (const volume of pod.volumes ?? []) {
    if (volume.emptyDir && !volume.emptyDir.sizeLimit) errors.push(`${volume.name}: emptyDir without sizeLimit`);
    if (volume.hostPath) errors.push(`${volume.name}: hostPath`);
  }
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC']) if (pod[field]) errors.push(field);
  return errors;
}

const listener = (bootstrap: Manifest, name: string): Manifest => bootstrap.static_resources.listeners.find((candidate: Manifest) => candidate.name === name);
const manager = (item: Manifest): Manifest => item.filter_chains[0].filters.find((filter: Manifest) => filter.name === 'envoy.filters.network.http_connection_manager').typed_config;
const routesOf = (item: Manifest): Manifest[] => manager(item).route_config.virtual_hosts.flatMap((host: Manifest) => host.routes);
const methodOf = (route: Manifest): string | undefined => route.match.headers?.find((header: Manifest) => header.name === ':method')?.string_match?.exact;
const routeFor = (item: Manifest, method: string, path: string): Manifest | undefined =>
  routesOf(item).find((route) => (route.match.path === path || (route.match.prefix !== undefined && path.startsWith(route.match.prefix))) && (methodOf(route) ?? method) === method);
const clusterOf = (bootstrap: Manifest, name: string): Manifest => bootstrap.static_resources.clusters.find((cluster: Manifest) => cluster.name === name);
const socketOf = (cluster: Manifest): Manifest => cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;

describe.skipIf(Boolean(unavailable))('components/llm-gateway', () => {
  const overlay = unavailable ? [] : gkeLlm();
  const gitops = unavailable ? [] : gitopsAfter((kustomization) => kustomization.components.push('../../components/llm-cpu', '../../components/llm-gateway'));

  describe.each([
    ['in overlays/gke-llm (configured gke overlay + llm-cpu + llm-gateway)', overlay],
    ['in the GitOps example with llm-cpu and llm-gateway listed', gitops],
  ] as const)('%s', (_where, objects) => {
    const gateway = () => find(objects, 'Deployment', 'llm-gateway');
    const envoy = () => container(gateway(), 'envoy');

    it('renders valid objects: the gateway, its Service, bootstrap and policies, beside the model server', async () => {
      for (const [kind, name] of [['Deployment', 'llm-gateway'], ['Service', 'llm-gateway'], ['NetworkPolicy', 'llm-gateway-ingress'], ['NetworkPolicy', 'llm-gateway-egress'], ['Deployment', 'llm-cpu'], ['Service', 'llm-cpu']]) {
        expect(find(objects, kind!, name!), `${kind}/${name}`).toBeDefined();
      }
      expect(objects.some((object) => object.kind === 'ConfigMap' && /^llm-gateway-envoy-[a-z0-9]+$/.test(object.metadata.name))).toBe(true);
      expect(await schemaErrors(objects)).toEqual([]);
    });

    it('meets the restricted Pod Security profile, with memory bounded, on the rag pool', () => {
      expect(restrictedErrors(gateway())).toEqual([]);
      const pod = podSpecOf(gateway());
      expect(pod.nodeSelector).toEqual({ workload: 'rag' });
      expect(pod.tolerations).toContainEqual({ key: 'workload', operator: 'Equal', value: 'rag', effect: 'NoSchedule' });
      expect(pod.automountServiceAccountToken).toBe(false);
    });

    it('runs Envoy 1.40 on the bootstrap of its ConfigMap, mounted read-only', () => {
      expect(envoy().image).toMatch(/^envoyproxy\/envoy:(distroless-)?v1\.40\.\d+(@sha256:[0-9a-f]{64})?$/);
      expect(envoy().command).toEqual(['/usr/local/bin/envoy']);
      expect(envoy().args).toContain('--disable-hot-restart');
      expect(envoy().volumeMounts.find((mount: Manifest) => mount.name === 'config').readOnly).toBe(true);
      expect(gatewayBootstrap(objects).static_resources).toBeDefined();
    });

    it('keeps the admin interface on 127.0.0.1, and probes readiness on a listener that passes GET /ready only', () => {
      const bootstrap = gatewayBootstrap(objects);
      const admin = bootstrap.admin.address.socket_address;
      expect(admin.address).toBe('127.0.0.1');
      const probe = envoy().readinessProbe.httpGet;
      expect(probe.path).toBe('/ready');
      const health = bootstrap.static_resources.listeners.find((item: Manifest) => item.address.socket_address.port_value === probe.port);
      expect(health.name).toBe('health');
      const forwarded = routesOf(health).filter((route) => route.route);
      expect(forwarded.map((route) => [methodOf(route), route.match.path])).toEqual([['GET', '/ready']]);
      expect(socketOf(clusterOf(bootstrap, forwarded[0]!.route.cluster))).toEqual({ address: '127.0.0.1', port_value: admin.port_value });
      expect(routeFor(health, 'GET', '/stats')?.direct_response?.status).toBe(404);
      expect(routeFor(health, 'POST', '/quitquitquit')?.direct_response?.status).toBe(404);
    });

    it('routes POST /v1/chat/completions and GET /v1/models to llm-cpu\'s Service (STRICT_DNS), nothing else', () => {
      const bootstrap = gatewayBootstrap(objects);
      const gatewayListener = listener(bootstrap, 'gateway');
      expect(gatewayListener.address.socket_address).toEqual({ address: '0.0.0.0', port_value: 8080 });
      const service = find(objects, 'Service', 'llm-gateway');
      expect(service.spec.selector).toEqual({ app: 'llm-gateway' });
      expect(service.spec.ports[0].targetPort).toBe(8080);
      expect(routeFor(gatewayListener, 'POST', '/v1/chat/completions')?.route?.cluster).toBe('llm-cpu');
      expect(routeFor(gatewayListener, 'GET', '/v1/models')?.route?.cluster).toBe('llm-cpu');
      for (const [method, path] of [['GET', '/v1/chat/completions'], ['GET', '/slots'], ['GET', '/metrics'], ['POST', '/completion'], ['GET', '/']]) {
        expect(routeFor(gatewayListener, method!, path!)?.direct_response?.status, `${method} ${path}`).toBe(404);
      }
      const cluster = clusterOf(bootstrap, 'llm-cpu');
      expect(cluster.type).toBe('STRICT_DNS');
      const llmCpu = find(objects, 'Service', 'llm-cpu');
      expect(socketOf(cluster)).toEqual({ address: `${llmCpu.metadata.name}.${llmCpu.metadata.namespace}.svc.cluster.local`, port_value: llmCpu.spec.ports[0].port });
    });

    it('gives a CPU completion minutes, not Envoy\'s default 15 s, and retries only what the model never saw', () => {
      const bootstrap = gatewayBootstrap(objects);
      const gatewayListener = listener(bootstrap, 'gateway');
      const chat = routeFor(gatewayListener, 'POST', '/v1/chat/completions')!.route;
      const gatewayTimeout = Number(apiEnvironment(objects).GATEWAY_TIMEOUT_MS) / 1000;
      // At least the API's own wait, so the API, not the gateway, gives up; far above 15 s.
      expect(seconds(chat.timeout)).toBeGreaterThanOrEqual(gatewayTimeout);
      expect(seconds(chat.timeout)).toBeGreaterThanOrEqual(120);
      // A non-streamed completion sends nothing until it ends: the stream idle timeout may not cut it first.
      expect(seconds(chat.idle_timeout ?? manager(gatewayListener).stream_idle_timeout)).toBeGreaterThanOrEqual(seconds(chat.timeout));
      for (const route of routesOf(gatewayListener).filter((candidate) => candidate.route)) {
        expect(route.route.retry_policy.retry_on.split(',').sort(), route.match.path).toEqual(['connect-failure', 'refused-stream']);
      }
    });

    it('points the API at the gateway: GATEWAY_URL its Service, the model server\'s alias and key unchanged', () => {
      const environment = apiEnvironment(objects);
      expect(environment.GATEWAY_URL).toBe('http://llm-gateway.rag.svc.cluster.local:8080');
      const llama = container(find(objects, 'Deployment', 'llm-cpu'), 'llama-server');
      expect(environment.GATEWAY_MODEL).toBe(llama.args[llama.args.indexOf('--alias') + 1]);
      expect(environment.GATEWAY_API_KEY).toBe('secret:vllm-api-key/api-key');
    });

    it.each([
      [inRag('retrieval'), inRag('llm-gateway'), 8080, 'the API generates answers through it'],
      [inRag('ingest'), inRag('llm-gateway'), 8080, 'the job writes contexts through it (CONTEXT_MODE=llm)'],
      [inRag('llm-gateway'), inRag('llm-cpu'), 8080, 'the gateway reaches the model server'],
      [inRag('llm-gateway'), kubeDns, 53, 'the gateway resolves the STRICT_DNS cluster'],
      [inRag('llm-cpu'), google, 443, 'the model server still downloads its model'],
    ] as const)('allows %o → %o:%i (%s)', (from, to, port, _why) => {
      expect(networkOf(policiesOf(objects)).allowed(from, to, port)).toBe(true);
    });

    it.each([
      [inRag('retrieval'), inRag('llm-cpu'), 8080],
      [inRag('ingest'), inRag('llm-cpu'), 8080],
      [inRag('retrieval'), inRag('llm-gateway'), 8081],
      [inRag('retrieval'), inRag('llm-gateway'), 9901],
      [client, inRag('llm-gateway'), 8080],
      [inRag('docling-serve'), inRag('llm-gateway'), 8080],
      [inRag('llm-gateway'), inRag('qdrant'), 6333],
      [inRag('llm-gateway'), google, 443],
    ] as const)('refuses %o → %o:%i', (from, to, port) => {
      expect(networkOf(policiesOf(objects)).allowed(from, to, port)).toBe(false);
    });
  });

  it('fits the two nodes of the pool that llm-cpu already needs (README "A language model for /chat")', () => {
    const node = forPods(4, 32);
    const groups = podGroups(overlay);
    expect(unplaced(groups, 2, node.cpu, 'cpu')).toEqual([]);
    expect(unplaced(groups, 2, node.memory, 'memoryLimit')).toEqual([]);
  });

  it('refuses to render when listed before llm-cpu, whose rules it replaces', () => {
    const { folder } = configuredOverlay();
    const wrong = join(folder, '..', 'gateway-first');
    mkdirSync(wrong, { recursive: true });
    writeFileSync(join(wrong, 'kustomization.yaml'), 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../gke]\ncomponents:\n  - ../../components/llm-gateway\n  - ../../components/llm-cpu\n');
    expect(() => kustomize(wrong)).toThrow();
  });
});
