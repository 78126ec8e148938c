/**
 * Monitoring that can be switched off, and a variant for clusters that already run the Prometheus Operator (issue
 * 42, item 5): components/without-monitoring removes the namespace's Prometheus, Alertmanager, Grafana and
 * kube-state-metrics with everything of theirs (the cluster-wide role included); components/prometheus-operator does
 * the same and hands the scrape jobs (PodMonitors, one per job of observability/files/prometheus.yml, same job
 * names) and the rules (one PrometheusRule, generated from the rule files) to the cluster's Prometheus, with the
 * network path from its namespace to the metrics ports and no other.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { prometheusRule, prometheusRulePath } from '../scripts/prometheus-rule.ts';
import { inRag, networkOf, type Peer } from './network-policies.ts';
import { gitopsAfter, kustomizeUnavailable, type Manifest, podSpecOf, ragDir, withComponents, workloads } from './render.ts';
import { schemaErrors } from './schema.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const monitoringApps = ['prometheus', 'alertmanager', 'grafana', 'kube-state-metrics'];
const scrapeJobs: string[] = parse(readFileSync(join(ragDir, 'observability/files/prometheus.yml'), 'utf8')).scrape_configs.map((job: Manifest) => job.job_name);
/** The node-level and kube-state-metrics jobs, which the cluster's own stack scrapes (kube-prometheus-stack). */
const clusterJobs = ['kubelet', 'cadvisor', 'kube-state-metrics'];
const operatorPrometheus: Peer = { namespace: 'monitoring', app: 'prometheus' };

/** Whether an object belongs to the namespace's own monitoring stack. */
const ofMonitoring = (object: Manifest): boolean =>
  monitoringApps.some((app) => object.metadata.name === app || object.metadata.name.startsWith(`${app}-`)) || object.metadata.name === 'rag-prometheus-kubelet' || object.metadata.name === 'prometheus-discovery';

it('the PrometheusRule is the rule files, as `pnpm k8s:prometheus-rule` writes it', () => {
  expect(readFileSync(prometheusRulePath, 'utf8')).toBe(prometheusRule());
});

describe.skipIf(Boolean(unavailable))('components/without-monitoring over the configured gke overlay', () => {
  const objects = unavailable ? [] : withComponents(['without-monitoring']);

  it('removes the monitoring stack and all of its objects, cluster-wide role included; the rest stays valid', async () => {
    expect(objects.filter(ofMonitoring).map((object) => `${object.kind}/${object.metadata.name}`)).toEqual([]);
    expect(objects.filter((object) => !object.metadata.namespace && object.kind !== 'Namespace')).toEqual([]);
    expect(workloads(objects).map((workload) => workload.metadata.name).sort()).toEqual(['docling-serve', 'embed-tei', 'embed-tei-ingest', 'ingest', 'otel-collector', 'qdrant', 'qdrant-backup', 'rerank-tei', 'retrieval']);
    expect(await schemaErrors(objects)).toEqual([]);
  });

  it('leaves no pod reading a ConfigMap, claim or account that is gone', () => {
    const names = (kind: string) => new Set(objects.filter((object) => object.kind === kind).map((object) => object.metadata.name));
    const [configMaps, claims, accounts] = [names('ConfigMap'), names('PersistentVolumeClaim'), names('ServiceAccount')];
    for (const workload of workloads(objects)) {
      const spec = podSpecOf(workload);
      for (const volume of spec.volumes ?? []) {
        if (volume.configMap) expect(configMaps.has(volume.configMap.name), `${workload.metadata.name}: ${volume.configMap.name}`).toBe(true);
        if (volume.persistentVolumeClaim) expect(claims.has(volume.persistentVolumeClaim.claimName), `${workload.metadata.name}: ${volume.persistentVolumeClaim.claimName}`).toBe(true);
      }
      if (spec.serviceAccountName) expect(accounts.has(spec.serviceAccountName), `${workload.metadata.name}: ${spec.serviceAccountName}`).toBe(true);
    }
  });
});

describe.skipIf(Boolean(unavailable))('components/prometheus-operator', () => {
  describe.each([
    ['over the configured gke overlay', () => withComponents(['prometheus-operator'])],
    ['in the GitOps example', () => gitopsAfter((kustomization) => kustomization.components.push('../../components/prometheus-operator'))],
  ] as const)('%s', (_where, render) => {
    const objects: Manifest[] = unavailable ? [] : render();
    const monitors = objects.filter((object) => object.kind === 'PodMonitor');

    it('removes the namespace\'s own monitoring stack and renders valid objects', async () => {
      expect(workloads(objects).filter((workload) => monitoringApps.includes(workload.metadata.name))).toEqual([]);
      expect(await schemaErrors(objects)).toEqual([]);
    });

    it('has a PodMonitor for every scrape job of the namespace\'s Prometheus but the cluster-level ones, under the same job name', () => {
      const jobs = monitors.map((monitor) => monitor.spec.podMetricsEndpoints[0].relabelings.find((relabeling: Manifest) => relabeling.targetLabel === 'job').replacement);
      expect(jobs.sort()).toEqual(scrapeJobs.filter((job) => !clusterJobs.includes(job)).sort());
    });

    it('points each PodMonitor at a named container port its pods have', () => {
      for (const monitor of monitors) {
        const apps: string[] = monitor.spec.selector.matchLabels?.app ? [monitor.spec.selector.matchLabels.app] : monitor.spec.selector.matchExpressions[0].values;
        for (const app of apps) {
          const workload = workloads(objects).find((candidate) => podSpecOf(candidate) && (candidate.spec.template?.metadata?.labels?.app === app));
          expect(workload, `${monitor.metadata.name}: no pod labelled ${app}`).toBeDefined();
          const ports = podSpecOf(workload).containers.flatMap((container: Manifest) => container.ports ?? []).map((port: Manifest) => port.name);
          for (const endpoint of monitor.spec.podMetricsEndpoints) expect(ports, `${monitor.metadata.name} → ${app}`).toContain(endpoint.port);
        }
      }
      const qdrant = monitors.find((monitor) => monitor.metadata.name === 'qdrant');
      expect(qdrant.spec.podMetricsEndpoints[0].authorization).toEqual({ type: 'Bearer', credentials: { name: 'qdrant-key', key: 'read-only-api-key' } });
    });

    it('carries the rule files as one PrometheusRule', () => {
      const rules = objects.filter((object) => object.kind === 'PrometheusRule');
      expect(rules.map((rule) => rule.metadata.name)).toEqual(['rag']);
      const groups = ['rag-alerts.yml', 'rag-cost.yml'].flatMap((file) => parse(readFileSync(join(ragDir, 'observability/files', file), 'utf8')).groups);
      expect(rules[0].spec.groups).toEqual(groups);
    });

    it.each([
      [inRag('retrieval'), 8090],
      [inRag('embed-tei'), 9000],
      [inRag('rerank-tei'), 9000],
      [inRag('qdrant'), 6333],
      [inRag('docling-serve'), 5001],
      [inRag('otel-collector'), 8888],
    ] as const)('lets the cluster\'s Prometheus scrape %o:%i', (target, port) => {
      expect(networkOf(objects.filter((object) => object.kind === 'NetworkPolicy')).allowed(operatorPrometheus, target, port)).toBe(true);
    });

    it.each([
      [inRag('qdrant'), 6335],
      [inRag('embed-tei'), 8080],
      [inRag('docling-serve'), 8080],
    ] as const)('and nothing else: refuses %o:%i', (target, port) => {
      expect(networkOf(objects.filter((object) => object.kind === 'NetworkPolicy')).allowed(operatorPrometheus, target, port)).toBe(false);
    });
  });
});
