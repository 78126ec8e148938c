/**
 * What the pods of an overlay request and may use (memory limit), summed as the node pool must hold them,
 * and what GKE leaves to pods on the pool's nodes. Used by the pool tests and by `pnpm docs:runbook`, which
 * writes the table of each overlay into the runbook (k8s/rag/README.md, "Requests and limits per overlay").
 */
import { join } from 'node:path';
import { configuredOverlay, kustomize, type Manifest, podSpecOf, workloads } from './render.ts';

/** Millicores and MiB. */
export interface Resources {
  cpu: number;
  memory: number;
  memoryLimit: number;
}

export interface PodGroup {
  name: string;
  /** Pods running at all times. */
  pods: number;
  /** Pods added at the peak: the ingest job, the HPA at its maximum, one surge pod of a rollout. */
  peakPods: number;
  /** One pod's resources. */
  each: Resources;
  /** Pods of the group go on different nodes (required pod anti-affinity on the hostname). */
  spread: boolean;
}

const millicores = (cpu: string | undefined) => (cpu === undefined ? 0 : cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000);
const mebibytes = (memory: string) => Number(memory.replace(/(Mi|Gi)$/, '')) * (memory.endsWith('Gi') ? 1024 : 1);

function podResources(workload: Manifest): Resources {
  const containers: Manifest[] = podSpecOf(workload).containers;
  return {
    cpu: containers.reduce((total, container) => total + millicores(container.resources.requests.cpu), 0),
    memory: containers.reduce((total, container) => total + mebibytes(container.resources.requests.memory), 0),
    memoryLimit: containers.reduce((total, container) => total + mebibytes(container.resources.limits.memory), 0),
  };
}

/**
 * The pods of rendered objects: Deployments and StatefulSets at their replicas, an HPA's maximum and a
 * rollout's surge pod at the peak, the ingest CronJob at the peak. The backup CronJob runs before the
 * ingest (02:17), never beside it, and needs less: it is left out.
 */
export function podGroups(objects: Manifest[]): PodGroup[] {
  const autoscalers = objects.filter((object) => object.kind === 'HorizontalPodAutoscaler');
  return workloads(objects)
    .filter((workload) => workload.metadata.name !== 'qdrant-backup')
    .map((workload) => {
      const replicas: number = workload.kind === 'CronJob' ? 0 : (workload.spec.replicas ?? 1);
      const maxReplicas: number = autoscalers.find((hpa) => hpa.spec.scaleTargetRef.name === workload.metadata.name)?.spec.maxReplicas ?? replicas;
      const surge = workload.spec.strategy?.rollingUpdate?.maxSurge;
      const peakPods = workload.kind === 'CronJob' ? 1 : maxReplicas - replicas + (typeof surge === 'number' ? surge : 0);
      const spread = Boolean(podSpecOf(workload).affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
      return { name: workload.metadata.name, pods: replicas, peakPods, each: podResources(workload), spread };
    });
}

const times = (resources: Resources, count: number): Resources => ({ cpu: resources.cpu * count, memory: resources.memory * count, memoryLimit: resources.memoryLimit * count });
const plus = (a: Resources, b: Resources): Resources => ({ cpu: a.cpu + b.cpu, memory: a.memory + b.memory, memoryLimit: a.memoryLimit + b.memoryLimit });
const none: Resources = { cpu: 0, memory: 0, memoryLimit: 0 };

export function totals(groups: PodGroup[]): { always: Resources; peak: Resources } {
  const always = groups.map((group) => times(group.each, group.pods)).reduce(plus, none);
  return { always, peak: groups.map((group) => times(group.each, group.peakPods)).reduce(plus, always) };
}

/**
 * What GKE leaves to pods on a node: 25 % of the first 4 GiB of memory, 20 % of the next 4, 10 % of the
 * next 8, 6 % of the next 112, 2 % above, and 100 MiB for eviction; CPU 6 % of the first core, 1 % of
 * the second, 0.5 % of the next two, 0.25 % above (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes).
 * Less what the runbook allows GKE's own DaemonSets: 0.4 CPU and 0.5 GiB.
 */
export function forPods(vcpus: number, gib: number): { cpu: number; memory: number } {
  const tiers = [[4, 0.25], [4, 0.2], [8, 0.1], [112, 0.06], [Infinity, 0.02]] as const;
  let left = gib;
  let reserved = 0;
  for (const [size, share] of tiers) {
    reserved += Math.min(left, size) * share;
    left -= Math.min(left, size);
  }
  const cpuReserved = [60, 10, 5, 5].slice(0, vcpus).reduce((a, b) => a + b, 0) + Math.max(0, vcpus - 4) * 2.5;
  return { cpu: vcpus * 1000 - cpuReserved - 400, memory: (gib - reserved) * 1024 - 100 - 512 };
}

/** The pool of each overlay: runbook step 2 (one e2-highmem-4) and "Scale-out: gke-distributed" (three). */
export const pools = { gke: { nodes: 1, vcpus: 4, gib: 32 }, 'gke-distributed': { nodes: 3, vcpus: 4, gib: 32 } } as const;
export type OverlayName = keyof typeof pools;

export function renderedOverlays(): Record<OverlayName, Manifest[]> {
  const gke = configuredOverlay();
  return { gke: gke.objects, 'gke-distributed': kustomize(join(gke.folder, '..', 'gke-distributed')) };
}

/**
 * Places every pod of the peak on `nodes` nodes of `capacity` by one resource (largest first, onto the
 * node with the most room left), keeping spread groups one pod per node. Returns the pods that found no
 * node: empty when such a placement exists.
 */
export function unplaced(groups: PodGroup[], nodes: number, capacity: number, by: 'memory' | 'memoryLimit' | 'cpu', options: { leaveOut?: (group: PodGroup, index: number) => boolean } = {}): string[] {
  const pods = groups.flatMap((group) =>
    Array.from({ length: group.pods + group.peakPods }, (_, index) => ({ group, index })).filter(({ group: candidate, index }) => !options.leaveOut?.(candidate, index)),
  );
  pods.sort((a, b) => b.group.each[by] - a.group.each[by]);
  const free = Array.from({ length: nodes }, () => capacity);
  const holds = Array.from({ length: nodes }, () => new Set<string>());
  const left: string[] = [];
  for (const { group, index } of pods) {
    const candidates = free.map((room, node) => ({ room, node })).filter(({ room, node }) => room >= group.each[by] && !(group.spread && holds[node]!.has(group.name)));
    const best = candidates.sort((a, b) => b.room - a.room)[0];
    if (!best) {
      left.push(`${group.name}#${index}`);
      continue;
    }
    free[best.node]! -= group.each[by];
    holds[best.node]!.add(group.name);
  }
  return left;
}

const gibText = (mebibytes: number) => `${(mebibytes / 1024).toFixed(1)} GiB`;

/** The runbook's table of one overlay: one row per workload, then the sums and the pool's allocatable. */
export function resourceTable(overlay: OverlayName, groups: PodGroup[]): string {
  const pool = pools[overlay];
  const node = forPods(pool.vcpus, pool.gib);
  const { always, peak } = totals(groups);
  const rows = groups.map((group) => {
    const count = group.pods === 0 ? `+${group.peakPods} at the peak` : group.peakPods > 0 ? `${group.pods} (+${group.peakPods} at the peak)` : `${group.pods}`;
    return `| \`${group.name}\` | ${count} | ${group.each.cpu}m | ${group.each.memory}Mi | ${group.each.memoryLimit}Mi |`;
  });
  const sum = (label: string, resources: Resources) => `| **${label}** | | **${resources.cpu}m** | **${resources.memory}Mi (${gibText(resources.memory)})** | **${resources.memoryLimit}Mi (${gibText(resources.memoryLimit)})** |`;
  const allocatable = `| **pool allocatable** (${pool.nodes} × e2-highmem-4, less GKE's reservations and DaemonSets) | | **${pool.nodes * node.cpu}m** | **${gibText(pool.nodes * node.memory)}** | **${gibText(pool.nodes * node.memory)}** |`;
  return [
    `**${overlay}**`,
    '',
    '| workload | pods | CPU request (each) | memory request (each) | memory limit (each) |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    sum('always running', always),
    sum('peak', peak),
    allocatable,
  ].join('\n');
}
