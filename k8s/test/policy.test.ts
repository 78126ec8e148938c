/**
 * What every pod of the rag namespace must be (issue 10, items 3 to 6), asserted on the manifests as
 * written, so it holds without kubectl: restricted security for every container, upstream images
 * included; memory requests and limits; images pinned; the API's drain and budget; TEI and Qdrant.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forPods } from './pool-fit.ts';
import { baseDir, type Manifest, podSpecOf, ragDir, readKustomization, workloads } from './render.ts';

const { objects, configMaps } = readKustomization(baseDir);
const pods = workloads(objects);
/** Our two images: the overlay sets their registry and tag (kustomize.test.ts checks it). */
const ourImages = new Set(['rag-retrieval', 'rag-ingest']);

interface Checked {
  workload: Manifest;
  pod: Manifest;
  container: Manifest;
  label: string;
}

const containers: Checked[] = pods.flatMap((workload) => {
  const pod = podSpecOf(workload);
  return [...(pod.initContainers ?? []), ...pod.containers].map((container: Manifest) => ({
    workload,
    pod,
    container,
    label: `${workload.kind}/${workload.metadata.name} ${container.name}`,
  }));
});

function effective(pod: Manifest, container: Manifest, field: string): unknown {
  return container.securityContext?.[field] ?? pod.securityContext?.[field];
}

function workload(name: string): Manifest {
  return pods.find((candidate) => candidate.metadata.name === name);
}

function containerOf(name: string): Manifest {
  return podSpecOf(workload(name)).containers[0];
}

function envOf(container: Manifest, name: string): Manifest {
  return (container.env ?? []).find((variable: Manifest) => variable.name === name);
}

describe('every container of every workload', () => {
  it('covers all the workloads of the namespace', () => {
    expect(pods.map((pod) => pod.metadata.name).sort()).toEqual(['alertmanager', 'docling-serve', 'embed-tei', 'embed-tei-ingest', 'grafana', 'ingest', 'kube-state-metrics', 'otel-collector', 'prometheus', 'qdrant', 'qdrant-backup', 'rerank-tei', 'retrieval']);
    expect(containers.length).toBeGreaterThanOrEqual(pods.length);
  });

  it.each(containers)('$label runs as a numeric non-root user', ({ pod, container }) => {
    expect(effective(pod, container, 'runAsNonRoot')).toBe(true);
    const user = effective(pod, container, 'runAsUser');
    expect(Number.isInteger(user) && (user as number) > 0, `runAsUser ${user}`).toBe(true);
  });

  it.each(containers)('$label cannot escalate, holds no capability, has a read-only root and seccomp RuntimeDefault', ({ pod, container }) => {
    expect(container.securityContext?.allowPrivilegeEscalation).toBe(false);
    expect(container.securityContext?.privileged ?? false).toBe(false);
    expect(container.securityContext?.capabilities?.drop).toContain('ALL');
    expect(container.securityContext?.capabilities?.add ?? []).toEqual([]);
    expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
    expect((effective(pod, container, 'seccompProfile') as Manifest)?.type).toBe('RuntimeDefault');
  });

  it.each(containers)('$label requests and limits its memory, and requests CPU', ({ container }) => {
    expect(container.resources?.requests?.memory).toBeTruthy();
    expect(container.resources?.limits?.memory).toBeTruthy();
    expect(container.resources?.requests?.cpu).toBeTruthy();
  });

  it.each(containers)('$label runs a pinned image', ({ container }) => {
    if (ourImages.has(container.image)) return;
    expect(container.image, 'a version tag and the digest it was published with').toMatch(/^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/);
    expect(container.image).not.toMatch(/:latest@/);
  });

  it.each(pods.map((pod) => ({ pod, label: `${pod.kind}/${pod.metadata.name}` })))('$label writes only to size-limited emptyDirs or claims', ({ pod }) => {
    for (const volume of podSpecOf(pod).volumes ?? []) {
      if (volume.emptyDir) expect(volume.emptyDir.sizeLimit, `${volume.name} has no sizeLimit`).toBeTruthy();
      expect(volume.hostPath, `${volume.name} is a hostPath`).toBeUndefined();
    }
    for (const field of ['hostNetwork', 'hostPID', 'hostIPC']) expect(podSpecOf(pod)[field] ?? false).toBe(false);
  });

  it('runs in a namespace that enforces the restricted Pod Security profile', () => {
    const namespace = objects.find((object) => object.kind === 'Namespace');
    expect(namespace.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });
});

describe('the retrieval API during rollouts and drains', () => {
  const api = containerOf('retrieval');
  const pod = podSpecOf(workload('retrieval'));
  const seconds = (name: string) => Number(envOf(api, name)?.value ?? configMaps.get('rag-config')?.[name]) / 1000;

  it('probes readiness on /readyz and liveness on /healthz', () => {
    expect(api.readinessProbe.httpGet.path).toBe('/readyz');
    expect(api.livenessProbe.httpGet.path).toBe('/healthz');
  });

  it('lets an answer in flight finish: drain bound above the gateway timeout, grace period above pause + drain', () => {
    const pause = Number(api.lifecycle.preStop.exec.command.at(-1));
    expect(pause).toBeGreaterThan(0);
    expect(seconds('SHUTDOWN_TIMEOUT_MS')).toBeGreaterThan(seconds('GATEWAY_TIMEOUT_MS'));
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(pause + seconds('SHUTDOWN_TIMEOUT_MS'));
  });

  it('keeps a replica serving through voluntary disruptions and rollouts', () => {
    const budget = objects.find((object) => object.kind === 'PodDisruptionBudget' && object.spec.selector.matchLabels.app === 'retrieval');
    expect(budget.spec.minAvailable).toBeGreaterThanOrEqual(1);
    // A pod Running but not Ready may be evicted: a crash-looping pod does not block node drains (GA in Kubernetes 1.31).
    expect(budget.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
    expect(workload('retrieval').spec.replicas).toBeGreaterThan(budget.spec.minAvailable);
    expect(workload('retrieval').spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });
});

describe('the ingest CronJob', () => {
  const cron = workload('ingest');

  it('cannot hang forever, starts late or not at all, and keeps finished runs long enough to be seen', () => {
    expect(cron.spec.concurrencyPolicy).toBe('Forbid');
    expect(cron.spec.timeZone).toBeTruthy();
    expect(cron.spec.startingDeadlineSeconds).toBeGreaterThan(0);
    expect(cron.spec.jobTemplate.spec.activeDeadlineSeconds).toBeGreaterThan(0);
    // A failed Job must outlive a day, so RagIngestFailed still sees it when the next run is due.
    expect(cron.spec.jobTemplate.spec.ttlSecondsAfterFinished).toBeGreaterThan(24 * 3600);
  });

  it('is reported to Prometheus by kube-state-metrics, which sees only this namespace', () => {
    const args: string[] = containerOf('kube-state-metrics').args;
    expect(args).toContain('--namespaces=rag');
    expect(args.find((arg) => arg.startsWith('--resources='))).toMatch(/cronjobs.*jobs.*deployments.*pods/);
    // The one cluster-wide grant is Prometheus reading the kubelets' metrics (claims filling, containers' memory).
    const clusterRoles = objects.filter((object) => object.kind === 'ClusterRole');
    expect(clusterRoles.map((role) => role.metadata.name)).toEqual(['rag-prometheus-kubelet']);
    expect(clusterRoles[0].rules).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['nodes/metrics'], verbs: ['get'] },
    ]);
  });
});

describe('docling-serve', () => {
  it('converts for the ingest job, which finds it through DOCLING_URL with its key', () => {
    const job = containerOf('ingest');
    const service = objects.find((object) => object.kind === 'Service' && object.metadata.name === 'docling-serve');
    expect(envOf(job, 'DOCLING_URL').value).toBe(`http://docling-serve.rag.svc.cluster.local:${service.spec.ports[0].port}`);
    expect(envOf(job, 'DOCLING_API_KEY').valueFrom.secretKeyRef.name).toBe(envOf(containerOf('docling-serve'), 'DOCLING_SERVE_API_KEY').valueFrom.secretKeyRef.name);
  });

  it('waits as long on a synchronous conversion as the job does', () => {
    const wait = Number(envOf(containerOf('docling-serve'), 'DOCLING_SERVE_MAX_SYNC_WAIT').value);
    const jobTimeout = Number(envOf(containerOf('ingest'), 'DOCLING_TIMEOUT_MS')?.value ?? 600_000) / 1000;
    expect(wait).toBeGreaterThanOrEqual(jobTimeout);
  });
});

describe('TEI and Qdrant', () => {
  it.each(['embed-tei', 'embed-tei-ingest', 'rerank-tei'])('%s caches its model on a claim, waits for the load, is probed for liveness, and reads its key from API_KEY', (name) => {
    const tei = containerOf(name);
    const pod = podSpecOf(workload(name));
    const cache = tei.volumeMounts.find((mount: Manifest) => mount.mountPath === envOf(tei, 'HUGGINGFACE_HUB_CACHE').value);
    const volume = pod.volumes.find((candidate: Manifest) => candidate.name === cache.name);
    expect(volume.persistentVolumeClaim.claimName).toBeTruthy();
    expect(objects.some((object) => object.kind === 'PersistentVolumeClaim' && object.metadata.name === volume.persistentVolumeClaim.claimName)).toBe(true);
    expect(workload(name).spec.strategy.type, 'a ReadWriteOnce claim cannot be mounted by two pods of a rolling update').toBe('Recreate');
    expect(tei.startupProbe.failureThreshold * tei.startupProbe.periodSeconds).toBeGreaterThanOrEqual(300);
    expect(tei.livenessProbe.httpGet.path).toBe('/health');
    expect(envOf(tei, 'API_KEY').valueFrom.secretKeyRef).toMatchObject({ name: 'embed-apikey', key: 'api-key' });
    expect(tei.args.join(' ')).not.toMatch(/api-key/);
  });

  it('Qdrant runs as the seed chart ran it, with a startup probe and the seed resources', () => {
    const qdrant = containerOf('qdrant');
    const pod = podSpecOf(workload('qdrant'));
    expect(pod.securityContext).toMatchObject({ runAsUser: 1000, runAsGroup: 2000, fsGroup: 3000 });
    expect(qdrant.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(qdrant.startupProbe.httpGet.path).toBe('/readyz');
    expect(qdrant.resources).toEqual({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '2Gi' } });
    expect(workload('qdrant').spec.volumeClaimTemplates[0].metadata.name, 'the Helm chart claim name, so its volume can be adopted').toBe('qdrant-storage');
  });
});

describe('the node pool', () => {
  const millicores = (cpu: string) => (cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000);
  const mebibytes = (memory: string) => Number(memory.replace(/(Mi|Gi)$/, '')) * (memory.endsWith('Gi') ? 1024 : 1);
  function sum(workload: Manifest, kind: 'requests' | 'limits', replicas = workload.spec.replicas ?? 1): { cpu: number; memory: number } {
    const containers = podSpecOf(workload).containers;
    return {
      cpu: replicas * containers.reduce((total: number, container: Manifest) => total + millicores(container.resources[kind].cpu ?? '0'), 0),
      memory: replicas * containers.reduce((total: number, container: Manifest) => total + mebibytes(container.resources[kind].memory), 0),
    };
  }
  const add = (a: { cpu: number; memory: number }, b: { cpu: number; memory: number }) => ({ cpu: a.cpu + b.cpu, memory: a.memory + b.memory });
  /** Always running, plus the ingest job (the backup job runs before it, never beside it) and a rollout's extra API pod. */
  function totals(kind: 'requests' | 'limits') {
    const steady = pods.filter((pod) => pod.kind !== 'CronJob').map((pod) => sum(pod, kind)).reduce(add);
    const surge = sum(workload('retrieval'), kind, workload('retrieval').spec.strategy.rollingUpdate.maxSurge);
    return { steady, peak: add(add(steady, sum(workload('ingest'), kind, 1)), surge) };
  }
  const { steady, peak } = totals('requests');
  const limits = totals('limits');

  it('is sized in the runbook from the requests and limits as they are', () => {
    const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
    expect(runbook).toContain(`| **always running** | **${steady.cpu}m** | **${steady.memory}Mi`);
    expect(runbook).toContain(`| **peak** | **${peak.cpu}m** | **${peak.memory}Mi`);
    expect(runbook).toMatch(new RegExp(`\\| \\*\\*always running\\*\\* .* \\| \\*\\*${limits.steady.memory}Mi`));
    expect(runbook).toMatch(new RegExp(`\\| \\*\\*peak\\*\\* .* \\| \\*\\*${limits.peak.memory}Mi`));
    expect(runbook).toContain('--machine-type e2-highmem-4 --node-labels workload=rag');
  });

  it('fits one e2-highmem-4 (4 vCPU, 32 GiB) at the peak: requests and memory limits, so no pod is killed for a neighbour', () => {
    const node = forPods(4, 32);
    expect(peak.cpu).toBeLessThanOrEqual(node.cpu);
    expect(peak.memory).toBeLessThanOrEqual(node.memory);
    expect(limits.peak.memory, `limits ${limits.peak.memory} MiB, node ${node.memory} MiB`).toBeLessThanOrEqual(node.memory);
  });

  it('would not fit the limits on the seed\'s e2-standard-4, nor the requests on an e2-standard-2', () => {
    expect(limits.peak.memory).toBeGreaterThan(forPods(4, 16).memory);
    expect(steady.cpu).toBeGreaterThan(forPods(2, 8).cpu);
  });
});

describe('the ingest job\'s memory', () => {
  it('requests at least its measured peak (600 to 734 MiB resident, issue 42), and the backfill shards the same', () => {
    const mebibytes = (memory: string) => Number(memory.replace(/(Mi|Gi)$/, '')) * (memory.endsWith('Gi') ? 1024 : 1);
    const request = mebibytes(containerOf('ingest').resources.requests.memory);
    expect(request).toBeGreaterThanOrEqual(768);
    for (const component of ['backfill', 'backfill-prune']) {
      const job = readKustomization(join(ragDir, 'components', component)).objects.find((object) => object.kind === 'Job');
      const ingest = podSpecOf(job).containers.find((container: Manifest) => container.name === 'ingest');
      expect(mebibytes(ingest.resources.requests.memory), component).toBe(request);
    }
  });
});
