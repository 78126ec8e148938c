/**
 * Each overlay, as `kubectl kustomize` renders it, on the node pool the runbook creates for it: requests and
 * memory limits summed at the peak (the ingest job, the HPA at its maximum, a rollout's surge pod) against
 * the pool's allocatable, and a placement that exists, one Qdrant peer per node included. The tables in the
 * runbook ("Requests and limits per overlay") are these sums (`pnpm docs:runbook`). The single node's own
 * sums are also checked without kubectl by policy.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forPods, type PodGroup, podGroups, pools, renderedOverlays, totals, unplaced } from './pool-fit.ts';
import { kustomizeUnavailable, ragDir } from './render.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
const node = forPods(4, 32);

describe.skipIf(Boolean(unavailable))('the node pools', () => {
  const overlays = unavailable ? undefined : renderedOverlays();

  it.each(Object.keys(pools) as Array<keyof typeof pools>)('%s: the peak requests and memory limits fit the pool, and a placement exists', (overlay) => {
    const groups = podGroups(overlays![overlay]);
    const { nodes } = pools[overlay];
    const { peak } = totals(groups);
    expect(peak.cpu).toBeLessThanOrEqual(nodes * node.cpu);
    expect(peak.memory).toBeLessThanOrEqual(nodes * node.memory);
    expect(peak.memoryLimit, `limits ${peak.memoryLimit} MiB, pool ${nodes * node.memory} MiB`).toBeLessThanOrEqual(nodes * node.memory);
    // No node overcommitted even if every pod grew to its memory limit, with the peers on different nodes.
    expect(unplaced(groups, nodes, node.memory, 'memoryLimit')).toEqual([]);
    expect(unplaced(groups, nodes, node.cpu, 'cpu')).toEqual([]);
  });

  it('gke-distributed: the runbook\'s pool has 3 nodes, one per Qdrant peer', () => {
    const qdrant = podGroups(overlays!['gke-distributed']).find((group) => group.name === 'qdrant')!;
    expect(qdrant.spread).toBe(true);
    expect(qdrant.pods).toBe(pools['gke-distributed'].nodes);
    expect(runbook.slice(runbook.indexOf('### Scale-out: gke-distributed'))).toMatch(/pool of at least 3 nodes \(`--num-nodes 3`/);
  });

  it('gke-distributed: a drained node leaves every pod but its Qdrant peer schedulable on the other two, by request', () => {
    const groups = podGroups(overlays!['gke-distributed']);
    const drainedPeer = (group: PodGroup, index: number) => group.name === 'qdrant' && index === 0;
    expect(unplaced(groups, 2, node.memory, 'memory', { leaveOut: drainedPeer })).toEqual([]);
    expect(unplaced(groups, 2, node.cpu, 'cpu', { leaveOut: drainedPeer })).toEqual([]);
  });

  it('gke-distributed: each Qdrant peer holds its share of 1,000,000 chunks in RAM (runbook "Sizing")', () => {
    const qdrant = podGroups(overlays!['gke-distributed']).find((group) => group.name === 'qdrant')!;
    // About 6 KiB a chunk (float32 1024-d vector × 1.5), 2 copies over 3 peers, 0.3 GiB for the process.
    const share = (1_000_000 * 6 * 2) / 3 / 1024;
    expect(qdrant.each.memoryLimit).toBeGreaterThanOrEqual(share + 0.3 * 1024);
    expect(runbook).toMatch(/1,000,000 \| 5\.7 GiB/);
  });

  it('would notice a pool too small: the distributed peak does not fit one node', () => {
    const groups = podGroups(overlays!['gke-distributed']);
    expect(unplaced(groups, 1, node.memory, 'memoryLimit').length).toBeGreaterThan(0);
  });
});
