/**
 * The candidate TEI of a model change as a kustomize component (k8s/rag/components/candidate-tei), rendered over the
 * configured gke overlay: valid objects, the model it is told, and its network paths evaluated flow by flow
 * (network-policies.ts) — without the component, a TEI for the new model falls under the default-deny egress and
 * cannot download its model (the finding of issue 31). Its pod also has to fit: pool-fit.ts places the peak.
 */
import { describe, expect, it } from 'vitest';
import { inRag, networkOf, type Peer } from './network-policies.ts';
import { forPods, podGroups, unplaced } from './pool-fit.ts';
import { baseDir, configuredOverlay, kustomizeUnavailable, type Manifest, readKustomization, withComponents } from './render.ts';
import { schemaErrors } from './schema.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const google: Peer = { namespace: '', ip: '142.250.0.1' };
const client: Peer = { namespace: 'default', app: 'some-client' };
const policiesOf = (objects: Manifest[]) => objects.filter((object) => object.kind === 'NetworkPolicy');

describe('without the component', () => {
  it('a TEI for the new model could not download it: default-deny egress, no policy of its own', () => {
    const { allowed } = networkOf(policiesOf(readKustomization(baseDir).objects));
    expect(allowed(inRag('embed-tei-next'), google, 443)).toBe(false);
  });
});

describe.skipIf(Boolean(unavailable))('the candidate-tei component over the gke overlay', () => {
  const model = 'BAAI/bge-m3';
  const objects = unavailable ? [] : withComponents(['candidate-tei'], `configMapGenerator:\n  - name: candidate-tei\n    literals: [CANDIDATE_EMBED_MODEL=${model}]\n    options:\n      annotations:\n        config.kubernetes.io/local-config: "true"\n`);
  const find = (kind: string, name: string): Manifest => objects.find((object) => object.kind === kind && object.metadata.name === name);
  const { allowed } = networkOf(policiesOf(objects));

  it('renders valid objects: its Deployment, Service, model cache and policies; the model setting is not applied', async () => {
    for (const [kind, name] of [['Deployment', 'embed-tei-next'], ['Service', 'embed-tei-next'], ['PersistentVolumeClaim', 'embed-tei-next-models'], ['NetworkPolicy', 'embed-tei-next-egress'], ['NetworkPolicy', 'embed-tei-next-ingress']]) {
      expect(find(kind!, name!), `${kind}/${name}`).toBeDefined();
    }
    expect(objects.filter((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('candidate-tei'))).toEqual([]);
    expect(await schemaErrors(objects)).toEqual([]);
  });

  it('serves the model the overlay names, with the image and settings of the job\'s TEI', () => {
    const [tei] = find('Deployment', 'embed-tei-next').spec.template.spec.containers;
    const [ingestTei] = find('Deployment', 'embed-tei-ingest').spec.template.spec.containers;
    expect(tei.args[0]).toBe(`--model-id=${model}`);
    expect(tei.args.slice(1)).toEqual(ingestTei.args.slice(1));
    expect(tei.image).toBe(ingestTei.image);
  });

  it.each([
    [inRag('embed-tei-next'), google, 443, 'downloads its model'],
    [inRag('ingest'), inRag('embed-tei-next'), 8080, 'the job fills the new collection with it'],
    [inRag('retrieval'), inRag('embed-tei-next'), 8080, 'the API embeds with it after the flip'],
    [inRag('prometheus'), inRag('embed-tei-next'), 9000, 'is scraped'],
    [inRag('embed-tei-next'), inRag('otel-collector'), 4317, 'sends its spans'],
  ] as const)('allows %o → %o:%i (%s)', (from, to, port, _why) => {
    expect(allowed(from, to, port)).toBe(true);
  });

  it.each([
    [client, inRag('embed-tei-next'), 8080],
    [inRag('embed-tei-next'), inRag('qdrant'), 6333],
    [inRag('docling-serve'), inRag('embed-tei-next'), 8080],
  ] as const)('refuses %o → %o:%i', (from, to, port) => {
    expect(allowed(from, to, port)).toBe(false);
  });

  it('keeps every path the namespace had', () => {
    const before = networkOf(policiesOf(configuredOverlay().objects));
    for (const [from, to, port] of [[inRag('ingest'), inRag('embed-tei-ingest'), 8080], [inRag('retrieval'), inRag('embed-tei'), 8080], [inRag('retrieval'), inRag('otel-collector'), 4318]] as const) {
      expect(before.allowed(from, to, port) && allowed(from, to, port)).toBe(true);
    }
  });

  it('does not fit the single e2-highmem-4 beside everything else at memory limits: the runbook adds a node for the change', () => {
    const node = forPods(4, 32);
    const groups = podGroups(objects);
    expect(unplaced(groups, 1, node.memory, 'memoryLimit')).not.toEqual([]);
    expect(unplaced(groups, 2, node.memory, 'memoryLimit')).toEqual([]);
    expect(unplaced(groups, 2, node.cpu, 'cpu')).toEqual([]);
  });
});
