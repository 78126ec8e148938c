/**
 * A pod that never calls the Kubernetes API carries no service-account token: a compromised TEI, Qdrant,
 * or ingest container then has no credentials for the cluster. Only the two that discover or read the
 * cluster's objects keep theirs.
 */
import { describe, expect, it } from 'vitest';
import { baseDir, podSpecOf, readKustomization, workloads } from './render.ts';

/** Prometheus discovers its targets (kubernetes_sd_configs); kube-state-metrics lists the namespace's objects. */
const callsTheKubernetesApi = new Set(['prometheus', 'kube-state-metrics']);

describe('service-account tokens', () => {
  const pods = workloads(readKustomization(baseDir).objects).map((workload) => ({ name: workload.metadata.name as string, spec: podSpecOf(workload) }));

  it('are mounted only into the pods that call the Kubernetes API', () => {
    const mounted = pods.filter((pod) => pod.spec.automountServiceAccountToken !== false).map((pod) => pod.name);
    expect(mounted.sort()).toEqual([...callsTheKubernetesApi].sort());
  });
});
