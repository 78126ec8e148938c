/**
 * GitOps packaging (README "GitOps"): an installation kept in the operator's own repository (k8s/rag/examples/gitops)
 * renders from this repository's base and components with its own values, nothing edited here and no placeholder
 * left; its Secrets come from Google Secret Manager through the External Secrets Operator (components/external-secrets,
 * ESO's v1 API: apis/externalsecrets/v1) for every key a pod reads; the Argo CD Application names only fields of
 * Argo CD's Application type (pkg/apis/application/v1alpha1/types.go).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitopsAfter, kustomizeUnavailable, type Manifest, podSpecOf, ragDir, readKustomization, readYaml, remoteTarget, workloads } from './render.ts';
import { schemaErrors } from './schema.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const example = join(ragDir, 'examples', 'gitops');

/** Every Secret key a pod reads: env secretKeyRef and secret volumes (their items, or the whole Secret). */
function secretKeysRead(objects: Manifest[]): Map<string, Set<string>> {
  const keys = new Map<string, Set<string>>();
  const add = (secret: string, key: string) => keys.set(secret, new Set([...(keys.get(secret) ?? []), key]));
  for (const workload of workloads(objects)) {
    const spec = podSpecOf(workload);
    for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
      for (const variable of container.env ?? []) if (variable.valueFrom?.secretKeyRef) add(variable.valueFrom.secretKeyRef.name, variable.valueFrom.secretKeyRef.key);
    }
    for (const volume of spec.volumes ?? []) {
      if (!volume.secret) continue;
      for (const item of volume.secret.items ?? [{ key: '*' }]) add(volume.secret.secretName, item.key);
    }
  }
  return keys;
}

describe('the GitOps example installation', () => {
  it('consumes this repository\'s base and components as remote targets at a release tag, folders of k8s/rag that exist', () => {
    const kustomization = readYaml(join(example, 'kustomization.yaml'))[0];
    for (const path of [...kustomization.resources, ...kustomization.components]) {
      const match = remoteTarget.exec(path);
      expect(match, path).not.toBeNull();
      expect(match![2], path).toMatch(/^v\d+\.\d+\.\d+$/);
      expect(existsSync(join(ragDir, match![1]!, 'kustomization.yaml')), path).toBe(true);
    }
    expect(readFileSync(join(example, 'kustomization.yaml'), 'utf8')).not.toMatch(/^\s+- \.\.\//m);
  });

  describe.skipIf(Boolean(unavailable))('as kubectl kustomize renders it', () => {
    const objects: Manifest[] = unavailable ? [] : gitopsAfter();
    const find = (kind: string, name: string): Manifest => objects.find((object) => object.kind === kind && object.metadata.name === name);

    it('is valid and carries the installation\'s values, no placeholder', async () => {
      expect(await schemaErrors(objects)).toEqual([]);
      expect(JSON.stringify(objects)).not.toMatch(/YOUR_/);
      const images = workloads(objects).flatMap((workload) => podSpecOf(workload).containers.map((container: Manifest) => container.image));
      expect(images).toContain('europe-west4-docker.pkg.dev/acme-rag-prod/rag/retrieval:1.0.0');
      expect(find('Ingress', 'retrieval'), 'the public-ingress component').toBeDefined();
    });

    it('gets its Workload Identity from components/gke-workload-identity (the gke overlay\'s own), with no copied patch', () => {
      const kustomization = readYaml(join(example, 'kustomization.yaml'))[0];
      expect(JSON.stringify(kustomization.patches)).not.toMatch(/ingestion|qdrant-backup|otel-collector/);
      const accounts = Object.fromEntries(['ingestion', 'qdrant-backup', 'otel-collector'].map((name) => [name, find('ServiceAccount', name).metadata.annotations['iam.gke.io/gcp-service-account']]));
      expect(accounts).toEqual({
        ingestion: 'rag-ingest-sa@acme-rag-prod.iam.gserviceaccount.com',
        'qdrant-backup': 'rag-backup-sa@acme-rag-prod.iam.gserviceaccount.com',
        'otel-collector': 'rag-trace-sa@acme-rag-prod.iam.gserviceaccount.com',
      });
      expect(objects.filter((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('rag-gke')), 'local-config: never applied').toEqual([]);
      const overlay = readYaml(join(ragDir, 'overlays', 'gke', 'kustomization.yaml'))[0];
      expect(overlay.components).toContain('../../components/gke-workload-identity');
      expect(JSON.stringify(overlay.patches ?? []), 'the overlay patches no ServiceAccount either').not.toMatch(/ServiceAccount/);
    });

    it('gets every Secret key a pod reads from an ExternalSecret of the Secret Manager store', () => {
      const produced = new Map<string, Set<string>>(
        objects.filter((object) => object.kind === 'ExternalSecret').map((secret) => [secret.spec.target.name, new Set(secret.spec.data.map((entry: Manifest) => entry.secretKey))]),
      );
      for (const [secret, keys] of secretKeysRead(objects)) {
        expect(produced.has(secret), `${secret} has no ExternalSecret`).toBe(true);
        for (const key of keys) if (key !== '*') expect(produced.get(secret)!.has(key), `${secret}/${key}`).toBe(true);
      }
      expect(produced.has('vllm-api-key') && produced.has('alertmanager-receiver'), 'the example lists both opt-in components').toBe(true);
      for (const secret of objects.filter((object) => object.kind === 'ExternalSecret')) {
        expect(secret.spec.secretStoreRef).toEqual({ kind: 'SecretStore', name: 'gcp-secret-manager' });
        for (const entry of secret.spec.data) expect(Object.keys(entry.remoteRef)).toEqual(['key']);
      }
      const store = find('SecretStore', 'gcp-secret-manager');
      expect(store.spec.provider.gcpsm).toEqual({ projectID: 'acme-rag-prod', auth: { workloadIdentity: { serviceAccountRef: { name: 'rag-secrets' }, clusterLocation: 'europe-west4', clusterName: 'vllm-cluster' } } });
      expect(find('ServiceAccount', 'rag-secrets').metadata.annotations['iam.gke.io/gcp-service-account']).toBe('rag-secrets-sa@acme-rag-prod.iam.gserviceaccount.com');
    });
  });
});

describe('components/external-secrets', () => {
  const names = (folder: string) => readYaml(join(ragDir, 'components', folder, folder === 'external-secrets' ? 'external-secrets.yaml' : 'external-secret.yaml')).filter((object) => object.kind === 'ExternalSecret').map((object) => object.metadata.name);

  it('holds only the Secrets every installation needs; the optional two are opt-in components, read as optional by their pods', () => {
    expect(names('external-secrets').sort()).toEqual(['docling-apikey', 'embed-apikey', 'grafana-admin', 'qdrant-key', 'rag-api-keys']);
    expect(names('external-secrets-gateway')).toEqual(['vllm-api-key']);
    expect(names('external-secrets-alerts')).toEqual(['alertmanager-receiver']);
    const base = readKustomization(join(ragDir, 'base')).objects;
    const gatewayKey = base.find((object) => object.kind === 'Deployment' && object.metadata.name === 'retrieval').spec.template.spec.containers[0].env.find((variable: Manifest) => variable.valueFrom?.secretKeyRef?.name === 'vllm-api-key');
    expect(gatewayKey.valueFrom.secretKeyRef.optional).toBe(true);
    const receiver = base.find((object) => object.kind === 'Deployment' && object.metadata.name === 'alertmanager').spec.template.spec.volumes.find((volume: Manifest) => volume.secret?.secretName === 'alertmanager-receiver');
    expect(receiver.secret.optional).toBe(true);
  });
});

describe('the Argo CD Application example', () => {
  const [application] = readYaml(join(ragDir, 'examples', 'argocd', 'application.yaml'));

  it('uses only fields of Argo CD\'s Application, syncing the rag namespace automatically', () => {
    expect(application.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(application.kind).toBe('Application');
    expect(Object.keys(application.spec).sort()).toEqual(['destination', 'ignoreDifferences', 'project', 'source', 'syncPolicy']);
    expect(Object.keys(application.spec.source).sort()).toEqual(['path', 'repoURL', 'targetRevision']);
    expect(application.spec.destination).toEqual({ server: 'https://kubernetes.default.svc', namespace: 'rag' });
    expect(application.spec.syncPolicy).toEqual({ automated: { prune: true, selfHeal: true }, syncOptions: ['RespectIgnoreDifferences=true'] });
    // ResourceIgnoreDifferences: group, kind, name, namespace, jsonPointers (k8s/test/gitops-day-two.test.ts says why).
    for (const entry of application.spec.ignoreDifferences) for (const key of Object.keys(entry)) expect(['group', 'kind', 'name', 'namespace', 'jsonPointers', 'jqPathExpressions', 'managedFieldsManagers']).toContain(key);
  });
});
