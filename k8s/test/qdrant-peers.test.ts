/**
 * Qdrant's peers find each other by DNS names that Kubernetes derives from the StatefulSet (statefulset-rules.ts):
 * each peer announces `--uri http://<its name>:6335` and bootstraps from peer 0's. The names are derived here from
 * the rendered StatefulSet and its Service, never read from the start script, and the script is then run for
 * each pod to check it announces exactly them. The scale-out overlay must apply over the single node (only
 * fields the API server lets change), and the migration of an install made before cluster mode is checked
 * against the StatefulSet those installs run (fixtures/qdrant-before-cluster-mode.yaml).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseDir, configuredOverlay, here, kustomize, kustomizeUnavailable, type Manifest, ragDir, readKustomization, readYaml } from './render.ts';
import { claimsOf, forbiddenStatefulSetChanges, peerIdentities, podDnsName } from './statefulset-rules.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const statefulSet = (objects: Manifest[]) => objects.find((object) => object.kind === 'StatefulSet' && object.metadata.name === 'qdrant');
const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');

/** What initialize.sh hands Qdrant's entrypoint for pod `hostname`: run for real, with the entrypoint replaced by echo. */
function startArguments(script: string, hostname: string): Record<string, string> {
  const output = execFileSync('sh', ['-c', script.replace(/exec \.\/entrypoint\.sh/g, 'echo')], { env: { HOSTNAME: hostname }, encoding: 'utf8' }).trim();
  const words = output.split(/\s+/);
  return Object.fromEntries(words.flatMap((word, index) => (word.startsWith('--') ? [[word.slice(2), words[index + 1] ?? '']] : [])));
}

function p2pPort(set: Manifest): number {
  const container = set.spec.template.spec.containers.find((candidate: Manifest) => candidate.name === 'qdrant');
  return container.ports.find((port: Manifest) => port.name === 'p2p').containerPort;
}

/** The cluster of `objects` as Kubernetes would name it: every peer's DNS name, or the reasons it has none. */
function checkPeers(objects: Manifest[], replicas?: number): { names: string[]; problems: string[] } {
  const pods = peerIdentities(statefulSet(objects), replicas);
  const answers = pods.map((pod) => podDnsName(pod, objects));
  return { names: answers.flatMap((answer) => (answer.name ? [answer.name] : [])), problems: answers.flatMap((answer) => (answer.problem ? [answer.problem] : [])) };
}

function checkStartScript(objects: Manifest[], script: string, replicas?: number): void {
  const set = statefulSet(objects);
  const { names, problems } = checkPeers(objects, replicas);
  expect(problems).toEqual([]);
  const port = p2pPort(set);
  const headless = objects.find((object) => object.kind === 'Service' && object.metadata.name === set.spec.serviceName);
  expect(headless.spec.ports.map((candidate: Manifest) => candidate.port), 'the headless Service publishes the consensus port').toContain(port);
  expect(headless.spec.publishNotReadyAddresses, 'a starting peer resolves the others before they are ready').toBe(true);
  peerIdentities(set, replicas).forEach((pod, ordinal) => {
    const start = startArguments(script, pod.hostname);
    expect(start.uri, `${pod.pod} announces its own DNS name`).toBe(`http://${names[ordinal]}:${port}`);
    if (ordinal === 0) expect(start.bootstrap, 'peer 0 starts the cluster').toBeUndefined();
    else expect(start.bootstrap, `${pod.pod} joins peer 0`).toBe(`http://${names[0]}:${port}`);
  });
}

describe('Qdrant peers, as written (no kubectl)', () => {
  const base = readKustomization(baseDir);
  const script = readFileSync(join(ragDir, 'qdrant', 'initialize.sh'), 'utf8');

  it('get DNS names from a headless serviceName, and the start script announces them, for 1 and for 3 peers', () => {
    const container = statefulSet(base.objects).spec.template.spec.containers[0];
    expect(container.env).toContainEqual({ name: 'QDRANT__CLUSTER__ENABLED', value: 'true' });
    checkStartScript(base.objects, script, 1);
    checkStartScript(base.objects, script, 3);
  });

  it('would notice the ClusterIP Service as serviceName: the peers then have no DNS names (the finding of issue 31)', () => {
    const broken = structuredClone(base.objects);
    statefulSet(broken).spec.serviceName = 'qdrant';
    expect(checkPeers(broken, 3).problems).toEqual(expect.arrayContaining([expect.stringMatching(/qdrant-1: Service qdrant is not headless/)]));
    const renamed = structuredClone(base.objects);
    statefulSet(renamed).spec.serviceName = 'qdrant-peers';
    expect(checkPeers(renamed, 2).problems[0]).toMatch(/no Service named qdrant-peers/);
  });
});

describe('migrating an install made before cluster mode (runbook "Qdrant in cluster mode: migrating an install")', () => {
  const before = readYaml(join(here, 'fixtures', 'qdrant-before-cluster-mode.yaml'));
  const oldSet = statefulSet(before);
  const newSet = statefulSet(readKustomization(baseDir).objects);
  const migration = runbook.slice(runbook.indexOf('### Qdrant in cluster mode: migrating an install'));
  const commands = migration.slice(0, migration.indexOf('\n### ', 10));

  it('changes fields the API server refuses to update, so the StatefulSet is replaced with its pod orphaned', () => {
    expect(forbiddenStatefulSetChanges(oldSet, newSet)).toEqual(['podManagementPolicy', 'serviceName', 'volumeClaimTemplates']);
    expect(commands).toContain('kubectl -n rag delete statefulset qdrant --cascade=orphan');
    expect(commands.indexOf('--cascade=orphan')).toBeLessThan(commands.indexOf('kubectl apply -k k8s/rag/overlays/gke'));
  });

  it('adopts the running pod and keeps its storage claim; deletes only the claim nothing mounts any more', () => {
    expect(Object.entries(newSet.spec.selector.matchLabels).every(([key, value]) => oldSet.spec.template.metadata.labels[key] === value)).toBe(true);
    const kept = claimsOf(oldSet, 0).filter((claim) => claimsOf(newSet, 0).includes(claim));
    const unused = claimsOf(oldSet, 0).filter((claim) => !claimsOf(newSet, 0).includes(claim));
    expect(kept).toEqual(['qdrant-storage-qdrant-0']);
    expect(unused).toEqual(['qdrant-snapshots']);
    for (const claim of unused) expect(commands).toContain(`kubectl -n rag delete pvc ${claim}`);
    expect(commands).not.toMatch(/delete pvc qdrant-storage/);
  });
});

describe.skipIf(Boolean(unavailable))('Qdrant peers, as kubectl kustomize renders the overlays', () => {
  const { folder } = unavailable ? { folder: '' } : configuredOverlay();
  const gke = unavailable ? [] : kustomize(folder);
  const distributed = unavailable ? [] : kustomize(join(folder, '..', 'gke-distributed'));
  const scriptOf = (objects: Manifest[]) => {
    const set = statefulSet(objects);
    const volume = set.spec.template.spec.volumes.find((candidate: Manifest) => candidate.name === 'cluster-init');
    const map = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === volume.configMap.name);
    return map.data['initialize.sh'] as string;
  };

  it.each([['gke', 1], ['gke-distributed', 3]] as const)('%s: %i peer(s), each announcing the DNS name Kubernetes gives it', (overlay, replicas) => {
    const objects = overlay === 'gke' ? gke : distributed;
    expect(statefulSet(objects).spec.replicas).toBe(replicas);
    checkStartScript(objects, scriptOf(objects));
  });

  it('gke-distributed applies over a running gke install: only replicas and the pod template change', () => {
    expect(forbiddenStatefulSetChanges(statefulSet(gke), statefulSet(distributed))).toEqual([]);
    const changed = Object.keys(statefulSet(distributed).spec).filter((field) => JSON.stringify(statefulSet(gke).spec[field]) !== JSON.stringify(statefulSet(distributed).spec[field]));
    expect(changed.sort()).toEqual(['replicas', 'template']);
  });
});
