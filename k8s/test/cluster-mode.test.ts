/**
 * The cluster mode the manifests need, read from the manifests: every pod selects the dedicated pool's node label
 * and tolerates no taint for it, and step 2 creates that pool. GKE Autopilot allows neither a node pool of one's own
 * nor such a selector without its toleration (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-separation,
 * "Separate workloads in Autopilot clusters": a toleration for the key:value pair and a nodeSelector for it), so the
 * runbook must say GKE Standard only and check the mode before it creates the pool.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseDir, type Manifest, podSpecOf, ragDir, readKustomization, workloads } from './render.ts';

const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
const pods = workloads(readKustomization(baseDir).objects).map((workload) => ({ name: workload.metadata.name as string, spec: podSpecOf(workload) }));

/** Pods whose node selector Autopilot would refuse: a custom label selected with no toleration of that key and value. */
function untoleratedSelectors(): string[] {
  return pods.flatMap(({ name, spec }) =>
    Object.entries(spec.nodeSelector ?? {})
      .filter(([key]) => !key.startsWith('cloud.google.com/') && !key.startsWith('kubernetes.io/'))
      .filter(([key, value]) => !(spec.tolerations ?? []).some((toleration: Manifest) => toleration.key === key && (toleration.operator === 'Exists' || toleration.value === value)))
      .map(([key, value]) => `${name}: ${key}=${value}`),
  );
}

describe('the cluster mode', () => {
  it('is GKE Standard, said at the top of the runbook, because the pods select a pool the runbook creates', () => {
    expect(untoleratedSelectors().length).toBeGreaterThan(0);
    expect(runbook).toMatch(/gcloud container node-pools create rag-pool/);
    expect(runbook.slice(0, runbook.indexOf('## 0.'))).toContain('**GKE Standard only**');
  });

  it('is checked in step 2 before the pool is created', () => {
    const step = runbook.slice(runbook.indexOf('## 2.'), runbook.indexOf('## 3.'));
    const check = step.indexOf("--format='value(autopilot.enabled)'");
    expect(check).toBeGreaterThan(0);
    expect(check).toBeLessThan(step.indexOf('gcloud container node-pools create'));
  });
});
