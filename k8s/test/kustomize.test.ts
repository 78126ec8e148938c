import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '@rag/core';
import { describe, expect, it } from 'vitest';
import { baseDir, configuredOverlay, kustomize, kustomizeUnavailable, type Manifest, overlayDir, podSpecOf, runbookValues, workloads } from './render.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

/** kubernetes-models class for an object, e.g. `kubernetes-models/apps/v1/Deployment`. */
async function modelOf(object: Manifest): Promise<{ new (data: unknown): { validate(): void } }> {
  const module = await import(`kubernetes-models/${object.apiVersion}/${object.kind}`);
  return module[object.kind];
}

async function schemaErrors(objects: Manifest[]): Promise<string[]> {
  const errors: string[] = [];
  for (const object of objects) {
    try {
      const Model = await modelOf(object);
      new Model(object).validate();
    } catch (error) {
      errors.push(`${object.kind}/${object.metadata?.name}: ${(error as Error).message}`);
    }
  }
  return errors;
}

describe.skipIf(Boolean(unavailable))('kubectl kustomize', () => {
  const base = unavailable ? [] : kustomize(baseDir);
  const { objects: overlay } = unavailable ? { objects: [] } : configuredOverlay();

  it('builds the base, every object valid against the Kubernetes schemas', async () => {
    expect(base.length).toBeGreaterThan(20);
    expect(await schemaErrors(base)).toEqual([]);
  });

  it('builds the gke overlay as the runbook configures it, every object valid', async () => {
    const names = (objects: Manifest[]) => objects.map((object) => `${object.kind}/${object.metadata.name.replace(/-[a-z0-9]{10}$/, '')}`);
    expect(names(overlay)).toEqual(names(base));
    expect(await schemaErrors(overlay)).toEqual([]);
  });

  it('would catch an invalid object (the validation is not a no-op)', async () => {
    const broken = structuredClone(base.find((object) => object.kind === 'Deployment'));
    broken.spec.replicas = 'two';
    expect(await schemaErrors([broken])).toHaveLength(1);
  });

  it('leaves no placeholder once configure.sh has run with the runbook variables', () => {
    const rendered = JSON.stringify(overlay);
    expect(rendered).not.toMatch(/YOUR_|REGION-docker|:latest/);
    const committed = readFileSync(join(overlayDir, 'kustomization.yaml'), 'utf8');
    expect(committed, 'the committed overlay keeps its placeholders').toContain('YOUR_PROJECT_ID');
  });

  it('runs our two images from the installation registry with its tag, and upstream images as pinned in the base', () => {
    const images = workloads(overlay).flatMap((workload) => podSpecOf(workload).containers.map((container: Manifest) => container.image));
    const registry = `${runbookValues.REGION}-docker.pkg.dev/${runbookValues.PROJECT_ID}/rag`;
    expect(images).toContain(`${registry}/retrieval:${runbookValues.TAG}`);
    expect(images).toContain(`${registry}/ingest:${runbookValues.TAG}`);
  });

  it('binds the ingest service account to the bucket reader through Workload Identity', () => {
    const account = overlay.find((object) => object.kind === 'ServiceAccount' && object.metadata.name === 'ingestion');
    expect(account.metadata.annotations['iam.gke.io/gcp-service-account']).toBe(`rag-ingest-sa@${runbookValues.PROJECT_ID}.iam.gserviceaccount.com`);
  });

  it('generates rag-config with a content hash, so a changed setting rolls the API and the job', () => {
    const config = overlay.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('rag-config-'));
    expect(config.metadata.name).toMatch(/^rag-config-[a-z0-9]{10}$/);
    expect(config.data).toMatchObject({ GCS_BUCKET: runbookValues.BUCKET, GCS_PREFIX: 'docs/', GATEWAY_URL: runbookValues.GATEWAY_URL });
    for (const workload of workloads(overlay).filter((object) => ['retrieval', 'ingest'].includes(object.metadata.name))) {
      const [container] = podSpecOf(workload).containers;
      expect(container.envFrom.map((source: Manifest) => source.configMapRef?.name)).toContain(config.metadata.name);
    }
    const otherBucket = configuredOverlay({ ...runbookValues, BUCKET: 'another-bucket' }).objects;
    const renamed = otherBucket.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('rag-config-'));
    expect(renamed.metadata.name).not.toBe(config.metadata.name);
  });

  it('gives the API and the job a configuration the service accepts', () => {
    const config = overlay.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('rag-config-'));
    for (const name of ['retrieval', 'ingest']) {
      const [container] = podSpecOf(workloads(overlay).find((object) => object.metadata.name === name)).containers;
      const environment = { ...config.data };
      for (const variable of container.env ?? []) environment[variable.name] = variable.value ?? 'secret-value';
      const loaded = loadConfig(environment);
      if (name === 'retrieval') expect(loaded.GATEWAY_URL).toBe(runbookValues.GATEWAY_URL);
      else expect(loaded.GCS_BUCKET).toBe(runbookValues.BUCKET);
    }
  });

  it('answers /chat extractively when the cluster has no gateway (GATEWAY_URL left empty)', () => {
    const noGateway = configuredOverlay({ ...runbookValues, GATEWAY_URL: '' }).objects;
    const config = noGateway.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('rag-config-'));
    expect(loadConfig({ ...config.data }).GATEWAY_URL).toBeUndefined();
  });
});
