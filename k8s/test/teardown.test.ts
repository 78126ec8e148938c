/**
 * The runbook's teardown (k8s/rag/README.md, "Teardown") against what the installations render: every namespaced
 * kind of the gke, gke-distributed, gke-public, gke-llm and gke-llm-gpu overlays and of the GitOps example (external secrets) is deleted
 * by one of its `kubectl delete` lines, every volume claim but Qdrant's storage too (StatefulSet claims by their
 * template's name), and the cluster-wide objects by name, with the cluster-admin they need said. Step 5's Secrets
 * and the Namespace stay, as the section says.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredOverlay, gitopsAfter, kustomize, kustomizeUnavailable, type Manifest, ragDir } from './render.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
const teardown = runbook.slice(runbook.indexOf('## Teardown'));
const firstBlock = /```sh\n([\s\S]*?)```/.exec(teardown)![1]!;
const commands = firstBlock.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter((line) => line.startsWith('kubectl'));

/** The resource types named by `kubectl -n rag delete TYPE[,TYPE…] --all` lines. */
const deletedKinds = new Set(commands.filter((line) => line.includes(' --all')).flatMap((line) => /delete ([a-z,]+)/.exec(line)![1]!.split(',')));
const deletedClaims = commands.filter((line) => / delete pvc /.test(line)).flatMap((line) => line.split(' delete pvc ')[1]!.split(' ').filter((word) => !word.startsWith('-')));

describe.skipIf(Boolean(unavailable))('the teardown', () => {
  const { folder } = unavailable ? { folder: '' } : configuredOverlay();
  const rendered: Manifest[] = unavailable
    ? []
    : [...kustomize(folder), ...kustomize(join(folder, '..', 'gke-distributed')), ...kustomize(join(folder, '..', 'gke-public')), ...kustomize(join(folder, '..', 'gke-llm')), ...kustomize(join(folder, '..', 'gke-llm-gpu')), ...gitopsAfter()];

  it('deletes every namespaced kind the installations create, but their Secrets', () => {
    const kinds = new Set(rendered.filter((object) => object.metadata?.namespace === 'rag').map((object) => object.kind));
    const missed = [...kinds].filter((kind) => !['Secret', 'PersistentVolumeClaim'].includes(kind) && !deletedKinds.has(kind.toLowerCase()));
    expect(missed).toEqual([]);
  });

  it('deletes every volume claim but Qdrant\'s storage, the StatefulSet\'s snapshot claims by their name', () => {
    const claims = new Set(rendered.filter((object) => object.kind === 'PersistentVolumeClaim').map((object) => object.metadata.name));
    expect([...claims].filter((claim) => !deletedClaims.includes(claim))).toEqual([]);
    const templates = new Set(rendered.filter((object) => object.kind === 'StatefulSet').flatMap((set) => set.spec.volumeClaimTemplates.map((template: Manifest) => `${template.metadata.name}-${set.metadata.name}-`)));
    expect([...templates].sort()).toEqual(['qdrant-snapshots-qdrant-', 'qdrant-storage-qdrant-']);
    expect(firstBlock).toContain("grep '/qdrant-snapshots-qdrant-'");
    expect(firstBlock).not.toMatch(/qdrant-storage/);
  });

  it('deletes the cluster-wide objects by name, and says that applying and deleting them needs cluster-admin', () => {
    const clusterWide = rendered.filter((object) => !object.metadata?.namespace && object.kind !== 'Namespace');
    expect([...new Set(clusterWide.map((object) => `${object.kind}/${object.metadata.name}`))].sort()).toEqual(['ClusterRole/rag-prometheus-kubelet', 'ClusterRoleBinding/rag-prometheus-kubelet']);
    expect(commands).toContain('kubectl delete clusterrolebinding,clusterrole rag-prometheus-kubelet');
    expect(teardown).toMatch(/needs cluster-admin/);
    const deploy = runbook.slice(runbook.indexOf('## 7. Deploy'), runbook.indexOf('## 8.'));
    expect(deploy).toMatch(/cluster admin/);
  });
});
