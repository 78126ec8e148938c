/**
 * The gke-distributed overlay as `kubectl kustomize` renders it once the gke overlay is configured:
 * valid objects, the same pod security as the single-node install, and what keeps each component
 * serving when one node goes away (README.md, "Scale-out: gke-distributed"). Qdrant's cluster start
 * follows the qdrant/qdrant Helm chart (templates/configmap.yaml: peer 0 `--uri`, others `--bootstrap`).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredOverlay, kustomize, kustomizeUnavailable, type Manifest, podSpecOf, workloads } from './render.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

async function schemaErrors(objects: Manifest[]): Promise<string[]> {
  const errors: string[] = [];
  for (const object of objects) {
    try {
      const module = await import(`kubernetes-models/${object.apiVersion}/${object.kind}`);
      new module[object.kind](object).validate();
    } catch (error) {
      errors.push(`${object.kind}/${object.metadata?.name}: ${(error as Error).message}`);
    }
  }
  return errors;
}

describe.skipIf(Boolean(unavailable))('the gke-distributed overlay', () => {
  const objects: Manifest[] = unavailable ? [] : kustomize(join(configuredOverlay().folder, '..', 'gke-distributed'));
  const find = (kind: string, name: string): Manifest => objects.find((object) => object.kind === kind && object.metadata.name === name);
  const qdrant = () => find('StatefulSet', 'qdrant');

  it('builds, every object valid against the Kubernetes schemas', async () => {
    expect(objects.length).toBeGreaterThan(40);
    expect(await schemaErrors(objects)).toEqual([]);
  });

  it('keeps every pod non-root on a read-only root filesystem, with memory requested and limited', () => {
    for (const workload of workloads(objects)) {
      const pod = podSpecOf(workload);
      expect(pod.securityContext.runAsNonRoot, workload.metadata.name).toBe(true);
      for (const container of pod.containers) {
        expect(container.securityContext.readOnlyRootFilesystem, container.name).toBe(true);
        expect(container.resources.requests.memory && container.resources.limits.memory, container.name).toBeTruthy();
      }
    }
  });

  it('runs Qdrant as a 3-peer cluster, one peer per node, each with its own claims', () => {
    const pod = podSpecOf(qdrant());
    const [container] = pod.containers;
    expect(qdrant().spec.replicas).toBe(3);
    // Cluster mode and the peers' DNS names come from the base: qdrant-peers.test.ts derives and checks them.
    expect(container.env).toContainEqual({ name: 'QDRANT__CLUSTER__ENABLED', value: 'true' });
    expect(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey).toBe('kubernetes.io/hostname');
    const claims = qdrant().spec.volumeClaimTemplates.map((template: Manifest) => template.metadata.name);
    for (const mount of container.volumeMounts) {
      const volume = pod.volumes.find((candidate: Manifest) => candidate.name === mount.name);
      expect(Boolean(volume) !== claims.includes(mount.name), `${mount.name}: one volume or one claim template`).toBe(true);
    }
    expect(find('PersistentVolumeClaim', 'qdrant-snapshots'), 'no single claim shared by three peers').toBeUndefined();
    expect(find('Service', 'qdrant-headless').spec.clusterIP).toBe('None');
  });

  it('creates the collection with 2 shards, 2 copies of each, a write acknowledged by one copy', () => {
    const config = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('rag-config-'));
    expect(config.data).toMatchObject({ QDRANT_SHARD_NUMBER: '2', QDRANT_REPLICATION_FACTOR: '2', QDRANT_WRITE_CONSISTENCY_FACTOR: '1' });
  });

  it('lets one node go at a time: disruption budgets for Qdrant, the query TEIs and the API, which scales on CPU', () => {
    expect(find('PodDisruptionBudget', 'qdrant').spec.maxUnavailable).toBe(1);
    expect(find('Deployment', 'embed-tei').spec.replicas).toBe(2);
    expect(find('PodDisruptionBudget', 'embed-tei').spec.minAvailable).toBe(1);
    expect(find('PersistentVolumeClaim', 'embed-tei-models'), 'two TEIs on two nodes cannot share a ReadWriteOnce claim').toBeUndefined();
    const hpa = find('HorizontalPodAutoscaler', 'retrieval');
    expect(hpa.spec.scaleTargetRef.name).toBe('retrieval');
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(find('PodDisruptionBudget', 'retrieval').spec.minAvailable).toBe(1);
    // A pod that never became Ready does not block a drain (policy/v1 PodDisruptionBudgetSpec, GA in 1.31).
    const budgets = objects.filter((object) => object.kind === 'PodDisruptionBudget');
    expect(budgets.map((budget) => budget.metadata.name).sort()).toEqual(['embed-tei', 'qdrant', 'retrieval']);
    for (const budget of budgets) expect(budget.spec.unhealthyPodEvictionPolicy, budget.metadata.name).toBe('AlwaysAllow');
  });

  it('lets the peers reach each other on 6335 past the namespace\'s default-deny ingress and egress', () => {
    const peers = find('NetworkPolicy', 'qdrant-peers');
    expect(peers.spec.podSelector.matchLabels).toEqual({ app: 'qdrant' });
    expect(peers.spec.ingress[0]).toEqual({ from: [{ podSelector: { matchLabels: { app: 'qdrant' } } }], ports: [{ port: 6335, protocol: 'TCP' }] });
    const out = find('NetworkPolicy', 'qdrant-peers-egress');
    expect(out.spec.egress[0]).toEqual({ to: [{ podSelector: { matchLabels: { app: 'qdrant' } } }], ports: [{ port: 6335, protocol: 'TCP' }] });
  });
});
