/**
 * The LLM tier on CPU (issue 42, item 4; k8s/rag/components/llm-cpu): llama.cpp's server with a small GGUF model,
 * the path a fresh project takes to its first generated answer. Rendered over the configured gke overlay (the
 * kubectl path) and in the GitOps example (listed like any other component): valid objects, a pod that meets the
 * restricted Pod Security profile as every pod of the base does (policy.test.ts), the API pointed at it
 * (GATEWAY_URL, GATEWAY_MODEL = the server's --alias, the key from the Secret the API sends), and its network paths
 * evaluated flow by flow (network-policies.ts). Also the gateway egress of the base: one policy (gateway-egress) whose
 * namespace the overlay sets from GATEWAY_URL, so a gateway elsewhere than envoy-gateway-system is not blocked.
 */
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { inRag, networkOf, type Peer } from './network-policies.ts';
import { forPods, podGroups, unplaced } from './pool-fit.ts';
import { baseDir, gitopsAfter, kustomize, kustomizeUnavailable, type Manifest, podSpecOf, ragDir, readKustomization, runbookValues, withComponents } from './render.ts';
import { schemaErrors } from './schema.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const google: Peer = { namespace: '', ip: '142.250.0.1' };
const client: Peer = { namespace: 'default', app: 'some-client' };
const policiesOf = (objects: Manifest[]) => objects.filter((object) => object.kind === 'NetworkPolicy');
const find = (objects: Manifest[], kind: string, name: string): Manifest => objects.find((object) => object.kind === kind && object.metadata.name === name);
const container = (workload: Manifest, name: string): Manifest => podSpecOf(workload).containers.find((candidate: Manifest) => candidate.name === name);
/** The value after a flag in a container's args. */
const flag = (args: string[], name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
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

describe('the gateway egress of the base', () => {
  const { allowed } = networkOf(policiesOf(readKustomization(baseDir).objects));

  it('is one policy, gateway-egress, for the API and the ingest job: the seed\'s Envoy namespace by default', () => {
    const policies = policiesOf(readKustomization(baseDir).objects);
    const mentions = policies.filter((policy) => policy.metadata.name !== 'otel-collector-ingress' && JSON.stringify(policy.spec.egress ?? []).includes('envoy-gateway-system'));
    expect(mentions.map((policy) => policy.metadata.name)).toEqual(['gateway-egress']);
    for (const app of ['retrieval', 'ingest']) expect(allowed(inRag(app), { namespace: 'envoy-gateway-system', app: 'envoy' }, 10080), app).toBe(true);
    expect(allowed(inRag('qdrant-backup'), { namespace: 'envoy-gateway-system', app: 'envoy' }, 10080)).toBe(false);
  });

  it.skipIf(Boolean(unavailable))('follows GATEWAY_URL\'s namespace in the configured gke overlay, so another gateway is not blocked', () => {
    const root = mkdtempSync(join(tmpdir(), 'rag-gateway-'));
    cpSync(ragDir, join(root, 'rag'), { recursive: true });
    const folder = join(root, 'rag', 'overlays', 'gke');
    execFileSync('bash', [join(folder, 'configure.sh')], { env: { ...process.env, ...runbookValues, GATEWAY_URL: 'http://my-gateway.llm-gateway.svc.cluster.local:8080' }, encoding: 'utf8' });
    const { allowed } = networkOf(policiesOf(kustomize(folder)));
    expect(allowed(inRag('retrieval'), { namespace: 'llm-gateway', app: 'gateway' }, 8080)).toBe(true);
    expect(allowed(inRag('retrieval'), { namespace: 'envoy-gateway-system', app: 'envoy' }, 10080)).toBe(false);
  });
});

describe.skipIf(Boolean(unavailable))('components/llm-cpu', () => {
  const overlay = unavailable ? [] : withComponents(['llm-cpu']);
  const gitops = unavailable ? [] : gitopsAfter((kustomization) => kustomization.components.push('../../components/llm-cpu'));

  describe.each([
    ['over the configured gke overlay', overlay],
    ['in the GitOps example', gitops],
  ] as const)('%s', (_where, objects) => {
    const server = () => find(objects, 'Deployment', 'llm-cpu');

    it('renders valid objects: the server, its Service, model claim and policies', async () => {
      for (const [kind, name] of [['Deployment', 'llm-cpu'], ['Service', 'llm-cpu'], ['PersistentVolumeClaim', 'llm-cpu-models'], ['NetworkPolicy', 'llm-cpu-ingress'], ['NetworkPolicy', 'llm-cpu-egress']]) {
        expect(find(objects, kind!, name!), `${kind}/${name}`).toBeDefined();
      }
      expect(await schemaErrors(objects)).toEqual([]);
    });

    it('meets the restricted Pod Security profile, with memory bounded, on the rag pool', () => {
      expect(restrictedErrors(server())).toEqual([]);
      const pod = podSpecOf(server());
      expect(pod.nodeSelector).toEqual({ workload: 'rag' });
      expect(pod.tolerations).toContainEqual({ key: 'workload', operator: 'Equal', value: 'rag', effect: 'NoSchedule' });
      expect(pod.automountServiceAccountToken).toBe(false);
    });

    it('runs llama.cpp\'s server on 0.0.0.0:8080 with the GGUF model, its key from the environment, probed on /health', () => {
      const llama = container(server(), 'llama-server');
      expect(llama.image).toMatch(/^ghcr\.io\/ggml-org\/llama\.cpp:server(@sha256:[0-9a-f]{64})?$/);
      expect(flag(llama.args, '--host')).toBe('0.0.0.0');
      expect(flag(llama.args, '--port')).toBe('8080');
      expect(flag(llama.args, '--hf-repo')).toBe('Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF');
      expect(flag(llama.args, '--hf-file')).toMatch(/\.gguf$/);
      expect(llama.args.join(' ')).not.toMatch(/--api-key/);
      expect(llama.env.find((variable: Manifest) => variable.name === 'LLAMA_API_KEY').valueFrom.secretKeyRef).toEqual({ name: 'vllm-api-key', key: 'api-key' });
      const cache = llama.env.find((variable: Manifest) => variable.name === 'LLAMA_CACHE').value;
      expect(llama.volumeMounts.find((mount: Manifest) => mount.mountPath === cache).name).toBe('models');
      for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) expect(llama[probe].httpGet, probe).toEqual({ path: '/health', port: 8080 });
      const service = find(objects, 'Service', 'llm-cpu');
      expect(service.spec.selector).toEqual({ app: 'llm-cpu' });
      expect(service.spec.ports[0].targetPort).toBe(8080);
    });

    it('points the API at it: GATEWAY_URL the Service, GATEWAY_MODEL the server\'s alias, the same key', () => {
      const environment = apiEnvironment(objects);
      const llama = container(server(), 'llama-server');
      expect(environment.GATEWAY_URL).toBe('http://llm-cpu.rag.svc.cluster.local:8080');
      expect(environment.GATEWAY_MODEL).toBe(flag(llama.args, '--alias'));
      expect(environment.GATEWAY_API_KEY).toBe('secret:vllm-api-key/api-key');
      expect(Number(environment.CONDENSE_TIMEOUT_MS)).toBeGreaterThanOrEqual(60000);
    });

    it.each([
      [inRag('retrieval'), inRag('llm-cpu'), 8080, 'the API generates answers with it'],
      [inRag('ingest'), inRag('llm-cpu'), 8080, 'the job writes contexts with it (CONTEXT_MODE=llm)'],
      [inRag('llm-cpu'), google, 443, 'downloads its model'],
    ] as const)('allows %o → %o:%i (%s)', (from, to, port, _why) => {
      expect(networkOf(policiesOf(objects)).allowed(from, to, port)).toBe(true);
    });

    it.each([
      [client, inRag('llm-cpu'), 8080],
      [inRag('docling-serve'), inRag('llm-cpu'), 8080],
      [inRag('llm-cpu'), inRag('qdrant'), 6333],
      [inRag('retrieval'), google, 443],
    ] as const)('refuses %o → %o:%i', (from, to, port) => {
      expect(networkOf(policiesOf(objects)).allowed(from, to, port)).toBe(false);
    });
  });

  it('needs a second node of the pool: it does not fit the single e2-highmem-4 beside everything else', () => {
    const node = forPods(4, 32);
    const groups = podGroups(overlay);
    expect(unplaced(groups, 1, node.cpu, 'cpu')).not.toEqual([]);
    expect(unplaced(groups, 2, node.cpu, 'cpu')).toEqual([]);
    expect(unplaced(groups, 2, node.memory, 'memoryLimit')).toEqual([]);
  });
});
