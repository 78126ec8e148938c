/**
 * The cluster the manifests need, read from the runbook and the manifests: step 2 creates a node pool of the
 * namespace's own, labelled and tainted, which GKE Autopilot does not allow (it makes its nodes itself; a pod
 * there separates itself with a toleration and a nodeSelector of the same key:value,
 * https://cloud.google.com/kubernetes-engine/docs/how-to/workload-separation, "Separate workloads in Autopilot
 * clusters"), so the runbook says GKE Standard only and checks the mode first. On that pool, every pod of every
 * folder the runbook applies selects the pool's label and tolerates its taint (a taint without a toleration leaves
 * the pod Pending; https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredOverlay, kustomize, kustomizeUnavailable, type Manifest, podSpecOf, ragDir, withComponents, workloads } from './render.ts';

const unavailable = kustomizeUnavailable();
const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
const step2 = runbook.slice(runbook.indexOf('## 2.'), runbook.indexOf('## 3.'));
const poolCommand = step2.slice(step2.indexOf('gcloud container node-pools create rag-pool')).split('\n\n')[0]!.replace(/\\\n\s*/g, '');
const [labelKey, labelValue] = /--node-labels (\S+)/.exec(poolCommand)![1]!.split('=');
const [taintKeyValue, taintEffect] = /--node-taints (\S+)/.exec(poolCommand)![1]!.split(':');
const [taintKey, taintValue] = taintKeyValue!.split('=');

/** Pods that would not run on the pool: not selecting its label, or not tolerating its taint. */
function misplaced(objects: Manifest[]): string[] {
  return workloads(objects).flatMap((workload) => {
    const spec = podSpecOf(workload);
    const selects = spec.nodeSelector?.[labelKey!] === labelValue;
    const tolerates = (spec.tolerations ?? []).some((toleration: Manifest) => toleration.key === taintKey && (toleration.operator === 'Exists' || toleration.value === taintValue) && (!toleration.effect || toleration.effect === taintEffect));
    return selects && tolerates ? [] : [`${workload.kind}/${workload.metadata.name}${selects ? '' : ' (no selector)'}${tolerates ? '' : ' (no toleration)'}`];
  });
}

describe('the cluster mode', () => {
  it('is GKE Standard, said at the top of the runbook: step 2 creates a node pool of its own', () => {
    expect(poolCommand).toMatch(/--node-labels workload=rag/);
    expect(runbook.slice(0, runbook.indexOf('## 0.'))).toContain('**GKE Standard only**');
  });

  it('is checked in step 2 before the pool is created', () => {
    const check = step2.indexOf("--format='value(autopilot.enabled)'");
    expect(check).toBeGreaterThan(0);
    expect(check).toBeLessThan(step2.indexOf('gcloud container node-pools create'));
  });
});

describe.skipIf(Boolean(unavailable))('the pool\'s taint', () => {
  it('is tolerated, and its label selected, by every pod of every overlay, job folder and component', () => {
    const { folder } = configuredOverlay();
    const folders = [folder, join(folder, '..', 'gke-distributed'), join(folder, '..', 'gke-public'), join(folder, '..', 'gke-llm'), join(folder, '..', '..', 'jobs', 'backfill'), join(folder, '..', '..', 'jobs', 'restore')];
    expect(taintEffect).toBe('NoSchedule');
    for (const path of folders) expect(misplaced(kustomize(path)), path).toEqual([]);
    expect(misplaced(withComponents(['candidate-tei'], 'configMapGenerator:\n  - name: candidate-tei\n    literals: [CANDIDATE_EMBED_MODEL=BAAI/bge-m3]\n'))).toEqual([]);
  });
});
