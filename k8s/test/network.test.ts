/**
 * The namespace's network policies, evaluated as Kubernetes evaluates them (a connection is allowed when
 * the destination's ingress and the source's egress both allow it; a pod that no policy of a direction
 * selects is open in that direction) over the paths the design uses and a few it must refuse.
 */
import { describe, expect, it } from 'vitest';
import { baseDir, type Manifest, readKustomization, workloads } from './render.ts';
import { inRag, networkOf, type Peer } from './network-policies.ts';

const policies: Manifest[] = readKustomization(baseDir).objects.filter((object) => object.kind === 'NetworkPolicy');
const { allowed } = networkOf(policies);
const client: Peer = { namespace: 'default', app: 'some-client' };
const gateway: Peer = { namespace: 'envoy-gateway-system', app: 'envoy' };
const google: Peer = { namespace: '', ip: '142.250.0.1' };

const scrape = (app: string, port: number) => [inRag('prometheus'), inRag(app), port] as const;

const paths: Array<readonly [Peer, Peer, number]> = [
  [client, inRag('retrieval'), 8090],
  [inRag('retrieval'), inRag('qdrant'), 6333],
  [inRag('retrieval'), inRag('embed-tei'), 8080],
  [inRag('retrieval'), inRag('rerank-tei'), 8080],
  [inRag('retrieval'), gateway, 10080],
  [inRag('ingest'), inRag('qdrant'), 6333],
  [inRag('ingest'), inRag('embed-tei-ingest'), 8080],
  [inRag('ingest'), inRag('docling-serve'), 5001],
  [inRag('ingest'), { namespace: '', ip: '169.254.169.254' }, 80],
  [inRag('ingest'), google, 443],
  [inRag('ingest'), gateway, 10080],
  [inRag('qdrant-backup'), inRag('qdrant'), 6333],
  [inRag('qdrant-backup'), { namespace: '', ip: '169.254.169.254' }, 80],
  [inRag('qdrant-backup'), google, 443],
  [inRag('embed-tei'), google, 443],
  [inRag('embed-tei-ingest'), google, 443],
  [inRag('rerank-tei'), google, 443],
  [inRag('alertmanager'), google, 443],
  [inRag('kube-state-metrics'), google, 443],
  [inRag('prometheus'), google, 443],
  scrape('retrieval', 8090),
  scrape('embed-tei', 9000),
  scrape('embed-tei-ingest', 9000),
  scrape('rerank-tei', 9000),
  scrape('qdrant', 6333),
  scrape('kube-state-metrics', 8080),
  scrape('docling-serve', 5001),
  [inRag('grafana'), inRag('prometheus'), 9090],
  [inRag('prometheus'), inRag('alertmanager'), 9093],
  [inRag('retrieval'), inRag('otel-collector'), 4318],
  [inRag('ingest'), inRag('otel-collector'), 4318],
  [inRag('embed-tei'), inRag('otel-collector'), 4317],
  [inRag('rerank-tei'), inRag('otel-collector'), 4317],
  [gateway, inRag('otel-collector'), 4318],
  [inRag('otel-collector'), google, 443],
  scrape('otel-collector', 8888),
  [inRag('prometheus'), { namespace: '', ip: '10.128.0.7' }, 10250],
  // Qdrant's peers (consensus, shard transfers), also on the single node.
  [inRag('qdrant'), inRag('qdrant'), 6335],
];

const refused: Array<readonly [Peer, Peer, number]> = [
  [client, inRag('qdrant'), 6333],
  [client, inRag('embed-tei'), 8080],
  [client, inRag('embed-tei-ingest'), 8080],
  // Ingestion never queues in front of queries, nor queries in front of the job's batches.
  [inRag('ingest'), inRag('embed-tei'), 8080],
  [inRag('retrieval'), inRag('embed-tei-ingest'), 8080],
  [client, inRag('prometheus'), 9090],
  [client, inRag('grafana'), 3000],
  [client, inRag('alertmanager'), 9093],
  [inRag('ingest'), inRag('rerank-tei'), 8080],
  [inRag('grafana'), inRag('qdrant'), 6333],
  [inRag('retrieval'), google, 443],
  [inRag('ingest'), inRag('retrieval'), 8090],
  [inRag('retrieval'), inRag('docling-serve'), 5001],
  [client, inRag('docling-serve'), 5001],
  [inRag('qdrant-backup'), inRag('embed-tei'), 8080],
  // Third-party pods reach only what they use (egress.yaml).
  [inRag('qdrant'), google, 443],
  [inRag('docling-serve'), google, 443],
  [inRag('grafana'), google, 443],
  [inRag('grafana'), inRag('qdrant'), 6333],
  [inRag('embed-tei'), inRag('qdrant'), 6333],
  [inRag('alertmanager'), inRag('qdrant'), 6333],
  [inRag('qdrant-backup'), gateway, 10080],
  [client, inRag('otel-collector'), 4318],
  [inRag('otel-collector'), inRag('qdrant'), 6333],
  // 6335 accepts writes: only the peers reach it.
  [inRag('retrieval'), inRag('qdrant'), 6335],
  [client, inRag('otel-collector'), 8888],
  [inRag('retrieval'), { namespace: '', ip: '10.128.0.7' }, 10250],
  [inRag('ingest'), inRag('qdrant'), 6335],
  [client, inRag('qdrant'), 6335],
];

const name = (peer: Peer) => (peer.ip ? peer.ip : `${peer.namespace}/${peer.app}`);

describe('network policies', () => {
  it('deny all ingress in the namespace unless a policy allows it', () => {
    const denyAll = policies.find((policy) => Object.keys(policy.spec.podSelector).length === 0);
    expect(denyAll.spec.policyTypes).toEqual(['Ingress']);
    expect(denyAll.spec.ingress).toBeUndefined();
  });

  it('deny all egress in the namespace unless a policy allows it', () => {
    const denyAll = policies.find((policy) => policy.metadata.name === 'default-deny-egress');
    expect(denyAll.spec.podSelector).toEqual({});
    expect(denyAll.spec.policyTypes).toEqual(['Egress']);
    expect(denyAll.spec.egress).toBeUndefined();
  });

  it.each(paths.map(([from, to, port]) => ({ from, to, port, label: `${name(from)} → ${name(to)}:${port}` })))('allow $label', ({ from, to, port }) => {
    expect(allowed(from, to, port)).toBe(true);
  });

  it.each(refused.map(([from, to, port]) => ({ from, to, port, label: `${name(from)} → ${name(to)}:${port}` })))('refuse $label', ({ from, to, port }) => {
    expect(allowed(from, to, port)).toBe(false);
  });
});

describe('HTTPS out of the namespace (port 443)', () => {
  const apps = workloads(readKustomization(baseDir).objects).map((workload) => workload.spec?.template?.metadata?.labels?.app ?? workload.spec.jobTemplate.spec.template.metadata.labels.app);
  const internal: Peer = { namespace: '', ip: '10.20.0.5' };
  const vpc: Peer = { namespace: '', ip: '172.16.0.2' };
  const metadata: Peer = { namespace: '', ip: '169.254.169.254' };

  it('is open to any address for the two workloads that read the Kubernetes API only (its address is the cluster\'s)', () => {
    expect(apps.filter((app) => allowed(inRag(app), internal, 443)).sort()).toEqual(['kube-state-metrics', 'prometheus']);
  });

  it('reaches public addresses only for the rest that need it: model downloads, Google APIs, webhooks', () => {
    const publicOnly = apps.filter((app) => allowed(inRag(app), google, 443) && !allowed(inRag(app), internal, 443));
    expect(publicOnly.sort()).toEqual(['alertmanager', 'embed-tei', 'embed-tei-ingest', 'ingest', 'otel-collector', 'qdrant-backup', 'rerank-tei']);
    for (const app of publicOnly) {
      expect(allowed(inRag(app), vpc, 443), `${app} → VPC`).toBe(false);
      expect(allowed(inRag(app), metadata, 443), `${app} → link-local`).toBe(false);
    }
  });

  it('is closed for the others', () => {
    expect(apps.filter((app) => !allowed(inRag(app), google, 443)).sort()).toEqual(['docling-serve', 'grafana', 'qdrant', 'retrieval']);
  });
});
