/**
 * The GPU tier (issue 42, item 4; k8s/rag/components/llm-gpu): vLLM on an NVIDIA L4 node pool, scaled between 0 and 1
 * by a KEDA core ScaledObject, preferred by the gateway while it has a healthy pod and backed by llm-cpu otherwise.
 * Rendered as overlays/gke-llm-gpu renders it (the configured gke overlay, llm-cpu, llm-gateway, llm-gpu: the kubectl
 * path) and in the GitOps example with the three components listed: valid objects (Kubernetes' schemas; the
 * ScaledObject, which kubernetes-models has no schema for, field by field against KEDA's ScaledObject and Prometheus
 * scaler references), the pod's placement on the GPU pool and its Pod Security, the scaling object, the network flows
 * allowed and refused (network-policies.ts), and the gateway's routing: the aggregate cluster llm-gpu → llm-cpu, and a
 * bootstrap that differs from components/llm-gateway's in exactly that. overlays/gke-llm, without the component,
 * renders as before. The bootstrap runs in the real Envoy in llm-gpu-envoy.real.test.ts.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatewayBootstrap, gkeLlm } from './llm-gateway.ts';
import { inRag, networkOf, type Peer } from './network-policies.ts';
import { configuredOverlay, gitopsAfter, kustomize, kustomizeUnavailable, type Manifest, podSpecOf, ragDir } from './render.ts';
import { schemaErrors } from './schema.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const google: Peer = { namespace: '', ip: '142.250.0.1' };
const client: Peer = { namespace: 'default', app: 'some-client' };
const keda: Peer = { namespace: 'keda', app: 'keda-operator' };
const policiesOf = (objects: Manifest[]) => objects.filter((object) => object.kind === 'NetworkPolicy');
const find = (objects: Manifest[], kind: string, name: string): Manifest => objects.find((object) => object.kind === kind && object.metadata.name === name);
const container = (workload: Manifest, name: string): Manifest => podSpecOf(workload).containers.find((candidate: Manifest) => candidate.name === name);
const flagValues = (args: string[], name: string): string[] => {
  const start = args.indexOf(name);
  if (start < 0) return [];
  const end = args.findIndex((arg, index) => index > start && arg.startsWith('--'));
  return args.slice(start + 1, end < 0 ? undefined : end);
};

/** The checks policy.test.ts makes of every base container (as llm-cpu.test.ts and llm-gateway.test.ts copy them). */
function restrictedErrors(workload: Manifest): string[] {
  const pod = podSpecOf(workload);
  const errors: string[] = [];
  const effective = (item: Manifest, field: string) => item.securityContext?.[field] ?? pod.securityContext?.[field];
  for (const item of [...(pod.initContainers ?? []), ...pod.containers]) {
    if (effective(item, 'runAsNonRoot') !== true) errors.push(`${item.name}: runAsNonRoot`);
    if (!(Number(effective(item, 'runAsUser')) > 0)) errors.push(`${item.name}: runAsUser`);
    if (item.securityContext?.allowPrivilegeEscalation !== false) errors.push(`${item.name}: allowPrivilegeEscalation`);
    if (!item.securityContext?.capabilities?.drop?.includes('ALL')) errors.push(`${item.name}: capabilities`);
    if (item.securityContext?.capabilities?.add?.length) errors.push(`${item.name}: capabilities added`);
    if (item.securityContext?.privileged) errors.push(`${item.name}: privileged`);
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

/** ScaledObject fields, keda.sh/docs/2.21 reference/scaledobject-spec; a key outside them is a typo KEDA would drop. */
const scaledObjectSpecKeys = ['scaleTargetRef', 'pollingInterval', 'cooldownPeriod', 'initialCooldownPeriod', 'idleReplicaCount', 'minReplicaCount', 'maxReplicaCount', 'fallback', 'advanced', 'triggers'];
/** The Prometheus scaler's metadata, keda.sh/docs/2.21 scalers/prometheus. */
const prometheusMetadataKeys = ['serverAddress', 'query', 'queryParameters', 'threshold', 'activationThreshold', 'namespace', 'customHeaders', 'ignoreNullValues', 'unsafeSsl', 'timeout'];

const routesOf = (listener: Manifest): Manifest[] =>
  listener.filter_chains[0].filters.find((filter: Manifest) => filter.name === 'envoy.filters.network.http_connection_manager').typed_config.route_config.virtual_hosts.flatMap((host: Manifest) => host.routes);
const methodOf = (route: Manifest): string | undefined => route.match.headers?.find((header: Manifest) => header.name === ':method')?.string_match?.exact;
const routeFor = (bootstrap: Manifest, method: string, path: string): Manifest | undefined =>
  routesOf(bootstrap.static_resources.listeners.find((listener: Manifest) => listener.name === 'gateway')).find(
    (route) => (route.match.path === path || (route.match.prefix !== undefined && path.startsWith(route.match.prefix))) && (methodOf(route) ?? method) === method,
  );
const clusterOf = (bootstrap: Manifest, name: string): Manifest => bootstrap.static_resources.clusters.find((cluster: Manifest) => cluster.name === name);

function gkeLlmGpu(): Manifest[] {
  const { folder } = configuredOverlay();
  return kustomize(join(folder, '..', 'gke-llm-gpu'));
}

describe.skipIf(Boolean(unavailable))('components/llm-gpu', () => {
  const overlay = unavailable ? [] : gkeLlmGpu();
  const gitops = unavailable ? [] : gitopsAfter((kustomization) => kustomization.components.push('../../components/llm-cpu', '../../components/llm-gateway', '../../components/llm-gpu'));

  describe.each([
    ['in overlays/gke-llm-gpu (configured gke overlay + llm-cpu + llm-gateway + llm-gpu)', overlay],
    ['in the GitOps example with llm-cpu, llm-gateway and llm-gpu listed', gitops],
  ] as const)('%s', (_where, objects) => {
    const deployment = () => find(objects, 'Deployment', 'llm-gpu');
    const vllm = () => container(deployment(), 'vllm');
    const scaled = () => find(objects, 'ScaledObject', 'llm-gpu');

    it('renders valid objects: vLLM, its claim, headless Service, policies and ScaledObject, beside the CPU tier and the gateway', async () => {
      for (const [kind, name] of [['Deployment', 'llm-gpu'], ['PersistentVolumeClaim', 'llm-gpu-models'], ['Service', 'llm-gpu'], ['NetworkPolicy', 'llm-gpu-ingress'], ['NetworkPolicy', 'llm-gpu-egress'], ['ScaledObject', 'llm-gpu'], ['Deployment', 'llm-cpu'], ['Deployment', 'llm-gateway']]) {
        expect(find(objects, kind!, name!), `${kind}/${name}`).toBeDefined();
      }
      expect(await schemaErrors(objects.filter((object) => object.apiVersion !== 'keda.sh/v1alpha1'))).toEqual([]);
      // KEDA core only: never the HTTP add-on's deprecated HTTPScaledObject.
      expect(objects.filter((object) => object.apiVersion.startsWith('keda.sh/') || object.apiVersion.startsWith('http.keda.sh/')).map((object) => `${object.apiVersion} ${object.kind}`)).toEqual(['keda.sh/v1alpha1 ScaledObject']);
    });

    it('runs vLLM\'s OpenAI server (a pinned vllm/vllm-openai tag) with the seed\'s GPU model, answering the API\'s model name too', () => {
      expect(vllm().image).toMatch(/^vllm\/vllm-openai:v\d+\.\d+\.\d+(@sha256:[0-9a-f]{64})?$/);
      expect(vllm().command).toEqual(['python3', '-m', 'vllm.entrypoints.openai.api_server']);
      expect(flagValues(vllm().args, '--model')).toEqual(['Qwen/Qwen2.5-Coder-14B-Instruct-AWQ']);
      expect(flagValues(vllm().args, '--port')).toEqual(['8000']);
      const llama = container(find(objects, 'Deployment', 'llm-cpu'), 'llama-server');
      const alias = flagValues(llama.args, '--alias')[0];
      expect(flagValues(vllm().args, '--served-model-name')).toContain(alias);
      expect(vllm().env.find((variable: Manifest) => variable.name === 'VLLM_API_KEY').valueFrom.secretKeyRef).toEqual({ name: 'vllm-api-key', key: 'api-key' });
    });

    it('runs on the L4 pool: nodeSelector nvidia-l4, the nvidia.com/gpu toleration, one GPU', () => {
      const pod = podSpecOf(deployment());
      expect(pod.nodeSelector).toEqual({ 'cloud.google.com/gke-accelerator': 'nvidia-l4' });
      expect(pod.tolerations).toContainEqual({ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' });
      expect(vllm().resources.limits['nvidia.com/gpu']).toBe(1);
    });

    it('meets the restricted Pod Security profile, with its caches on the claim or emptyDirs and /dev/shm in memory', () => {
      expect(restrictedErrors(deployment())).toEqual([]);
      const pod = podSpecOf(deployment());
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.volumes.find((volume: Manifest) => volume.name === 'shm').emptyDir.medium).toBe('Memory');
      const mounts = vllm().volumeMounts.map((mount: Manifest) => mount.mountPath);
      expect(mounts).toEqual(expect.arrayContaining(['/models', '/tmp', '/dev/shm']));
      const env = Object.fromEntries(vllm().env.filter((variable: Manifest) => variable.value !== undefined).map((variable: Manifest) => [variable.name, variable.value]));
      for (const name of ['HOME', 'HF_HOME', 'VLLM_CACHE_ROOT', 'TRITON_CACHE_DIR', 'TORCHINDUCTOR_CACHE_DIR', 'XDG_CACHE_HOME', 'NUMBA_CACHE_DIR']) {
        expect(mounts.some((mount: string) => env[name]?.startsWith(`${mount}/`) || env[name] === mount), name).toBe(true);
      }
      expect(env.USER).toBeTruthy();
    });

    it('starts at zero replicas, probes vLLM\'s own /health on 8000, behind a headless Service', () => {
      expect(deployment().spec.replicas).toBe(0);
      for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) expect(vllm()[probe].httpGet, probe).toEqual({ path: '/health', port: 8000 });
      const service = find(objects, 'Service', 'llm-gpu');
      expect(service.spec.clusterIP).toBe('None');
      expect(service.spec.selector).toEqual({ app: 'llm-gpu' });
      expect(service.spec.ports[0].targetPort).toBe(8000);
    });

    it('is scaled by a KEDA core ScaledObject: 0 to 1, Prometheus triggers on the API\'s chat metrics, a long cool-down', () => {
      const spec = scaled().spec;
      expect(Object.keys(spec).filter((key) => !scaledObjectSpecKeys.includes(key))).toEqual([]);
      expect(spec.scaleTargetRef.name).toBe(deployment().metadata.name);
      expect(spec.scaleTargetRef.kind ?? 'Deployment').toBe('Deployment');
      expect(spec.minReplicaCount).toBe(0);
      expect(spec.maxReplicaCount).toBe(1);
      expect(spec.cooldownPeriod).toBeGreaterThanOrEqual(900);
      const prometheus = find(objects, 'Service', 'prometheus');
      const telemetry = readFileSync(join(ragDir, '..', '..', 'packages', 'core', 'src', 'telemetry.ts'), 'utf8');
      expect(spec.triggers.map((trigger: Manifest) => trigger.name)).toEqual(['cpu-tier-busy', 'gpu-tier-in-use']);
      for (const trigger of spec.triggers) {
        expect(trigger.type).toBe('prometheus');
        expect(Object.keys(trigger.metadata).filter((key) => !prometheusMetadataKeys.includes(key))).toEqual([]);
        expect(trigger.metadata.serverAddress).toBe(`http://${prometheus.metadata.name}.${prometheus.metadata.namespace}.svc.cluster.local:${prometheus.spec.ports[0].port}`);
        // Metadata values are strings (the CRD's triggers[].metadata is a map of strings).
        for (const value of Object.values(trigger.metadata)) expect(typeof value).toBe('string');
        expect(Number(trigger.metadata.threshold)).toBeGreaterThan(0);
        expect(Number(trigger.metadata.activationThreshold)).toBeGreaterThan(0);
        // The API's own histogram (telemetry.ts), as Prometheus names it, for chat calls.
        expect(telemetry).toContain("'gen_ai.client.operation.duration'");
        expect(trigger.metadata.query).toMatch(/gen_ai_client_operation_duration_(sum|count)\{gen_ai_operation_name="chat"\}/);
      }
      // The CPU tier is busy when more completions are in flight, on average, than it has slots minus a margin.
      const llama = container(find(objects, 'Deployment', 'llm-cpu'), 'llama-server');
      const slots = Number(flagValues(llama.args, '--parallel')[0]);
      expect(Number(spec.triggers[0].metadata.activationThreshold)).toBeLessThan(slots);
      // The keep-up trigger counts only while the GPU tier has an available replica: it never wakes the pool itself.
      expect(spec.triggers[1].metadata.query).toContain('and on () (max(kube_deployment_status_replicas_available{namespace="rag", deployment="llm-gpu"}) > 0)');
    });

    it.each([
      [inRag('llm-gateway'), inRag('llm-gpu'), 8000, 'the gateway reaches vLLM'],
      [inRag('llm-gateway'), inRag('llm-cpu'), 8080, 'the gateway still reaches the CPU tier (fallback)'],
      [inRag('retrieval'), inRag('llm-gateway'), 8080, 'the API reaches the gateway'],
      [inRag('llm-gpu'), google, 443, 'vLLM downloads its model'],
      [keda, inRag('prometheus'), 9090, 'KEDA\'s operator queries Prometheus'],
      [inRag('prometheus'), inRag('retrieval'), 8090, 'Prometheus still scrapes the API\'s metrics, the triggers\' source'],
    ] as const)('allows %o → %o:%i (%s)', (from, to, port, _why) => {
      expect(networkOf(policiesOf(objects)).allowed(from, to, port)).toBe(true);
    });

    it.each([
      [inRag('retrieval'), inRag('llm-gpu'), 8000],
      [inRag('ingest'), inRag('llm-gpu'), 8000],
      [inRag('docling-serve'), inRag('llm-gpu'), 8000],
      [client, inRag('llm-gpu'), 8000],
      [keda, inRag('llm-gpu'), 8000],
      [inRag('llm-gpu'), inRag('qdrant'), 6333],
      [inRag('llm-gpu'), inRag('llm-cpu'), 8080],
      [inRag('llm-gpu'), { namespace: '', ip: '10.0.0.5' }, 443],
      [inRag('llm-gateway'), google, 443],
      [client, inRag('prometheus'), 9090],
      [keda, inRag('qdrant'), 6333],
    ] as const)('refuses %o → %o:%i', (from, to, port) => {
      expect(networkOf(policiesOf(objects)).allowed(from, to, port)).toBe(false);
    });

    it('routes completions to the aggregate cluster llm: llm-gpu (health-checked on vLLM\'s /health) first, then llm-cpu', () => {
      const bootstrap = gatewayBootstrap(objects);
      expect(routeFor(bootstrap, 'POST', '/v1/chat/completions')?.route?.cluster).toBe('llm');
      // The API's readiness check stays on the CPU tier, always up.
      expect(routeFor(bootstrap, 'GET', '/v1/models')?.route?.cluster).toBe('llm-cpu');
      const aggregate = clusterOf(bootstrap, 'llm');
      expect(aggregate.lb_policy).toBe('CLUSTER_PROVIDED');
      expect(aggregate.cluster_type.name).toBe('envoy.clusters.aggregate');
      expect(aggregate.cluster_type.typed_config['@type']).toBe('type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig');
      expect(aggregate.cluster_type.typed_config.clusters).toEqual(['llm-gpu', 'llm-cpu']);
      const gpu = clusterOf(bootstrap, 'llm-gpu');
      expect(gpu.type).toBe('STRICT_DNS');
      const service = find(objects, 'Service', 'llm-gpu');
      expect(gpu.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address).toEqual({ address: `${service.metadata.name}.${service.metadata.namespace}.svc.cluster.local`, port_value: service.spec.ports[0].port });
      const [check] = gpu.health_checks;
      expect(check.http_health_check.path).toBe(vllm().readinessProbe.httpGet.path);
      expect(check.no_traffic_interval).toBe(check.interval);
      // llama-server's /health answers 503 while it loads: the fallback tier is not health-checked.
      expect(clusterOf(bootstrap, 'llm-cpu').health_checks).toBeUndefined();
    });

    it('differs from components/llm-gateway\'s bootstrap in the chat route\'s cluster and the two added clusters only', () => {
      const withGpu = structuredClone(gatewayBootstrap(objects));
      const withoutGpu = gatewayBootstrap(gkeLlm());
      routeFor(withGpu, 'POST', '/v1/chat/completions')!.route.cluster = 'llm-cpu';
      withGpu.static_resources.clusters = withGpu.static_resources.clusters.filter((cluster: Manifest) => !['llm', 'llm-gpu'].includes(cluster.name));
      expect(withGpu).toEqual(withoutGpu);
    });
  });

  it('leaves overlays/gke-llm as it was: its gateway bootstrap is components/llm-gateway/envoy.yaml, and no GPU object', () => {
    const objects = gkeLlm();
    const configMap = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('llm-gateway-envoy-'));
    expect(configMap.data['envoy.yaml']).toBe(readFileSync(join(ragDir, 'components', 'llm-gateway', 'envoy.yaml'), 'utf8'));
    expect(objects.filter((object) => object.metadata?.name?.startsWith('llm-gpu') || object.apiVersion.startsWith('keda.sh/'))).toEqual([]);
    expect(find(objects, 'NetworkPolicy', 'llm-gateway-egress').spec.egress).toHaveLength(1);
  });

  it('changes nothing else of overlays/gke-llm: the same objects, but for its own, the bootstrap and two policies', () => {
    const key = (object: Manifest) => `${object.kind}/${object.metadata.name.replace(/^llm-gateway-envoy-[a-z0-9]+$/, 'llm-gateway-envoy')}`;
    const before = new Map(gkeLlm().map((object) => [key(object), object]));
    const own = new Set(['Deployment/llm-gpu', 'PersistentVolumeClaim/llm-gpu-models', 'Service/llm-gpu', 'NetworkPolicy/llm-gpu-ingress', 'NetworkPolicy/llm-gpu-egress', 'ScaledObject/llm-gpu']);
    const changed: string[] = [];
    for (const object of overlay) {
      if (own.has(key(object))) continue;
      const previous = before.get(key(object));
      expect(previous, key(object)).toBeDefined();
      if (JSON.stringify(previous) !== JSON.stringify(object)) changed.push(key(object));
    }
    expect(changed.sort()).toEqual(['ConfigMap/llm-gateway-envoy', 'Deployment/llm-gateway', 'NetworkPolicy/llm-gateway-egress', 'NetworkPolicy/prometheus-ingress']);
    expect(overlay.length).toBe(before.size + own.size);
  });

  it('refuses to render when listed before llm-gateway, whose bootstrap and egress it changes', () => {
    const { folder } = configuredOverlay();
    const wrong = join(folder, '..', 'gpu-first');
    mkdirSync(wrong, { recursive: true });
    writeFileSync(join(wrong, 'kustomization.yaml'), 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../gke]\ncomponents:\n  - ../../components/llm-cpu\n  - ../../components/llm-gpu\n  - ../../components/llm-gateway\n');
    expect(() => kustomize(wrong)).toThrow();
  });
});
