/**
 * Every probe of an upstream image asks a path on the port where that image serves it. A probe on the
 * wrong port restarts the pod forever (kube-state-metrics' /livez on 8081 answered 404 and the pod
 * restarted every minute), so each fact below names where it was checked.
 */
import { describe, expect, it } from 'vitest';
import { baseDir, type Manifest, podSpecOf, readKustomization, workloads } from './render.ts';

interface Served {
  /** Paths the image answers with 200 when healthy, without credentials, on `port`. */
  paths: string[];
  port: number;
  source: string;
}

/** Keyed by the image repository (no tag or digest). */
const upstreamHealthEndpoints: Record<string, Served[]> = {
  'registry.k8s.io/kube-state-metrics/kube-state-metrics': [
    {
      paths: ['/livez', '/healthz', '/metrics'],
      port: 8080,
      source: 'kubernetes/kube-state-metrics pkg/app/server.go, buildMetricsServer: livezPath and healthzPath on --port (default 8080)',
    },
    {
      paths: ['/readyz', '/metrics'],
      port: 8081,
      source: 'kubernetes/kube-state-metrics pkg/app/server.go, buildTelemetryServer: readyzPath on --telemetry-port (default 8081)',
    },
  ],
  'qdrant/qdrant': [
    {
      paths: ['/healthz', '/livez', '/readyz'],
      port: 6333,
      source: 'api.qdrant.tech/v-1-17-x/api-reference/service/livez and /readyz ("Kubernetes liveness/readiness probe", REST port 6333); exempt from the API key by the whitelist of src/actix/auth.rs',
    },
  ],
  'ghcr.io/huggingface/text-embeddings-inference': [
    {
      paths: ['/health'],
      port: 8080,
      source: 'huggingface/text-embeddings-inference router/src/http/server.rs: .route("/health", get(health)) on --port (set to 8080 in our args); without auth since PR #360 (1.6.0)',
    },
  ],
  'quay.io/docling-project/docling-serve-cpu': [
    { paths: ['/health'], port: 5001, source: 'docling-project/docling-serve: GET /health, uvicorn on port 5001 by default (docs/deployment.md)' },
  ],
  'prom/prometheus': [{ paths: ['/-/healthy', '/-/ready'], port: 9090, source: 'prometheus.io/docs/prometheus/latest/management_api ("Health check", "Readiness check")' }],
  'prom/alertmanager': [{ paths: ['/-/healthy', '/-/ready'], port: 9093, source: 'prometheus.io/docs/alerting/0.28/management_api' }],
  'grafana/grafana': [{ paths: ['/api/health'], port: 3000, source: 'grafana.com/docs/grafana/latest/developers/http_api/other ("Health API": GET /api/health)' }],
  'otel/opentelemetry-collector-contrib': [
    {
      paths: ['/'],
      port: 13133,
      source: 'open-telemetry/opentelemetry-collector-contrib extension/healthcheckextension/README.md: endpoint 0.0.0.0:13133 (set in our config), path "/" by default',
    },
  ],
};

const objects = readKustomization(baseDir).objects;

function repositoryOf(image: string): string {
  return image.replace(/@sha256:.*$/, '').replace(/:[^/:]+$/, '');
}

function portNumber(container: Manifest, port: number | string): number {
  if (typeof port === 'number') return port;
  const named = (container.ports ?? []).find((candidate: Manifest) => candidate.name === port);
  return named?.containerPort;
}

interface Probe {
  workload: string;
  container: Manifest;
  kind: string;
  path: string;
  port: number;
}

function upstreamProbes(): Probe[] {
  return workloads(objects).flatMap((workload) =>
    podSpecOf(workload).containers.flatMap((container: Manifest) =>
      (['startupProbe', 'readinessProbe', 'livenessProbe'] as const)
        .filter((kind) => container[kind]?.httpGet)
        .map((kind) => ({ workload: workload.metadata.name, container, kind, path: container[kind].httpGet.path, port: portNumber(container, container[kind].httpGet.port) })),
    ),
  );
}

describe('probes of upstream images', () => {
  const probes = upstreamProbes().filter((probe) => !probe.container.image.startsWith('rag-'));

  it('cover every upstream image the namespace runs', () => {
    const images = new Set(probes.map((probe) => repositoryOf(probe.container.image)));
    expect([...images].sort()).toEqual(Object.keys(upstreamHealthEndpoints).sort());
  });

  it('ask each image a health path on the port that serves it', () => {
    const wrong = probes.filter((probe) => {
      const served = upstreamHealthEndpoints[repositoryOf(probe.container.image)] ?? [];
      return !served.some((endpoint) => endpoint.port === probe.port && endpoint.paths.includes(probe.path));
    });
    expect(wrong.map((probe) => `${probe.workload} ${probe.kind} ${probe.path} on ${probe.port}`)).toEqual([]);
  });
});
