import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema, loadConfig, Telemetry } from '@rag/core';
import { describe, expect, it } from 'vitest';
import { baseDir, type Manifest, podSpecOf, ragDir, readKustomization, readYaml, workloads } from './render.ts';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

interface Container {
  name: string;
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string } }>;
}

const base = readKustomization(baseDir);
const resources: Manifest[] = base.objects;
const ragConfig = base.configMaps.get('rag-config')!;

function podLabelsOf(resource: Manifest): Record<string, string> | undefined {
  return resource.kind === 'CronJob' ? resource.spec.jobTemplate.spec.template.metadata?.labels : resource.spec?.template?.metadata?.labels;
}

function containersOf(resource: Manifest): Container[] {
  return podSpecOf(resource)?.containers ?? [];
}

/** The environment a container of ours starts with: rag-config, then its own env (secrets as placeholders). */
function environmentOf(container: Container): Record<string, string> {
  const environment: Record<string, string> = {};
  if (container.envFrom?.some((source) => source.configMapRef?.name === 'rag-config')) Object.assign(environment, ragConfig);
  for (const variable of container.env ?? []) environment[variable.name] = variable.value ?? 'secret-value';
  return environment;
}

const ourWorkloads = workloads(resources).filter((resource) => ['retrieval', 'ingest'].includes(resource.metadata?.name));
/** Read by the runtime, not the config: glibc's malloc arenas (the ingest workloads set it, as the image does). */
const runtimeVariables = ['MALLOC_ARENA_MAX'];
const knownVariables = new Set([...Object.keys(configSchema._def.schema.shape), ...runtimeVariables]);

describe('the rag namespace manifests', () => {
  it('list only files that exist, resources and generated config maps alike', () => {
    expect(base.files.length).toBeGreaterThan(10);
    for (const file of base.files) expect(existsSync(file), file).toBe(true);
  });

  it('run the retrieval API and the ingest CronJob from our images', () => {
    expect(ourWorkloads.map((resource) => `${resource.kind}/${resource.metadata.name}`).sort()).toEqual(['CronJob/ingest', 'Deployment/retrieval']);
  });

  it.each(['retrieval', 'ingest'])('give %s only variables the config schema knows, with valid values', (name) => {
    const workload = ourWorkloads.find((resource) => resource.metadata.name === name);
    const environment = environmentOf(containersOf(workload)[0]!);
    const unknown = Object.keys(environment).filter((variable) => !knownVariables.has(variable));
    expect(unknown).toEqual([]);
    const config = loadConfig(environment);
    expect(config.QDRANT_URL).toBe('http://qdrant.rag.svc.cluster.local:6333');
    expect(config.collection).toBe('docs-v2');
  });

  it('point Services at ports their pods listen on', () => {
    for (const service of resources.filter((resource) => resource.kind === 'Service')) {
      const selected = (workload: Manifest) => Object.entries(service.spec.selector).every(([key, value]) => podLabelsOf(workload)?.[key] === value);
      const workload = workloads(resources).find(selected);
      expect(workload, `${service.metadata.name} selects a workload`).toBeDefined();
      const ports = containersOf(workload).flatMap((container: Manifest) => (container.ports ?? []).map((port: Manifest) => port.containerPort));
      for (const port of service.spec.ports) expect(ports, `${service.metadata.name}:${port.targetPort}`).toContain(port.targetPort);
    }
  });

  it('probe the API for readiness on /readyz and for liveness on /healthz', () => {
    const [api] = containersOf(ourWorkloads.find((resource) => resource.metadata.name === 'retrieval')) as Manifest[];
    expect(api.readinessProbe.httpGet.path).toBe('/readyz');
    expect(api.livenessProbe.httpGet.path).toBe('/healthz');
  });
});

/** Every series the dashboard and the alert rules query must exist in a real scrape of the service's metrics. */
describe('the dashboard and alert rules', () => {
  const files = join(ragDir, 'observability/files');
  const dashboard = JSON.parse(readFileSync(join(files, 'rag-pipeline.json'), 'utf8'));
  const rules = ['rag-alerts.yml', 'rag-cost.yml'].flatMap((file) => readYaml(join(files, file))[0].groups.flatMap((group: Manifest) => group.rules));
  const expressions: string[] = [...dashboard.panels.flatMap((panel: Manifest) => panel.targets.map((target: Manifest) => target.expr)), ...rules.map((rule: Manifest) => rule.expr)];

  it('query only series the service exposes', async () => {
    const telemetry = new Telemetry();
    telemetry.recordRequest('/search', 'ok');
    telemetry.recordStage('rerank', 0.2);
    telemetry.recordTopScore(0.6, true);
    telemetry.recordModelCall('chat', 'openai', 'qwen3-4b-cpu', 1.5);
    telemetry.recordTokens('qwen3-4b-cpu', 900, 120);
    telemetry.recordRerankFallback('RAG_RERANK_UNAVAILABLE');
    const exposition = await telemetry.scrape();
    await telemetry.shutdown();
    const samples = exposition.split('\n').filter((line) => line && !line.startsWith('#'));
    const exposed = new Set(samples.map((line) => line.split(/[{ ]/)[0]));
    const labels = new Set(samples.flatMap((line) => [...line.matchAll(/([a-z_]+)="/g)].map((match) => match[1])));
    const names = expressions.flatMap((expression) => expression.match(/\b(?:rag|gen_ai)_[a-z_]+/g) ?? []);
    const queried = new Set(names.filter((name) => !labels.has(name)));
    expect([...queried].filter((series) => !exposed.has(series))).toEqual([]);
    expect(queried.size).toBeGreaterThan(5);
  });

  // docling-serve v1.36.0 (the image's tag): GET /metrics on port 5001 with no API-key dependency, while
  // DOCLING_SERVE_OTEL_ENABLE_PROMETHEUS is true (default) — docling_serve/app.py and settings.py of the
  // docling-serve 1.36.0 wheel on PyPI.
  it('come from targets Prometheus scrapes: the API, both TEI servers on their metrics port, Qdrant with its read-only key, docling-serve', () => {
    const prometheus = readYaml(join(files, 'prometheus.yml'))[0];
    const jobs = new Map<string, Manifest>(prometheus.scrape_configs.map((job: Manifest) => [job.job_name, job]));
    expect([...jobs.keys()]).toEqual(expect.arrayContaining(['rag-retrieval', 'embed-tei', 'rerank-tei', 'qdrant', 'kube-state-metrics', 'docling-serve']));
    // The ingest job's TEI is scraped under the job embed-tei (its pods told apart by the pod label).
    const scraped = [['embed-tei', 'embed-tei'], ['embed-tei', 'embed-tei-ingest'], ['rerank-tei', 'rerank-tei'], ['qdrant', 'qdrant'], ['kube-state-metrics', 'kube-state-metrics'], ['docling-serve', 'docling-serve']];
    for (const [job, app] of scraped as Array<[string, string]>) {
      const keep = jobs.get(job).relabel_configs.find((rule: Manifest) => rule.action === 'keep');
      const [label, port] = keep.regex.split(';');
      expect(app, `job ${job} keeps pods labelled app=${app}`).toMatch(new RegExp(`^(?:${label})$`));
      const ports = containersOf(workloads(resources).find((workload) => workload.metadata.name === app)).flatMap((container: Manifest) => container.ports.map((p: Manifest) => p.name));
      expect(ports, `${app} exposes a port named ${port}`).toContain(port);
    }
    expect(jobs.get('qdrant').authorization.credentials_file).toMatch(/read-only-api-key$/);
    const docling = containersOf(workloads(resources).find((workload) => workload.metadata.name === 'docling-serve'))[0] as Manifest;
    expect(docling.image).toMatch(/docling-serve-cpu:v1\.36\.0@/);
    expect(docling.env.find((variable: Manifest) => variable.name === 'DOCLING_SERVE_OTEL_ENABLE_PROMETHEUS'), 'the default (true) serves /metrics').toBeUndefined();
    expect(jobs.get('docling-serve').authorization, '/metrics needs no key').toBeUndefined();
    const upstream = expressions.flatMap((expression) => expression.match(/\b(?:te|rest_responses)_[a-z_]+/g) ?? []);
    expect(upstream.length, 'the dashboard shows TEI and Qdrant').toBeGreaterThan(3);
  });
});
