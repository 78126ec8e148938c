/**
 * The one-off Jobs under GitOps (issue 42, item 2): restore and backfill are components (k8s/rag/components/restore,
 * components/backfill, components/backfill-prune) that take their image and bucket from the installation they are
 * listed in, the `images:` and the rag-backup ConfigMap of the GitOps example, as every other workload does. Rendered from a
 * copy of the example with each component listed, as a controller would render the operator's commit: no
 * placeholder left, the example's own image and backup bucket.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitopsAfter, gitopsDir, kustomizeUnavailable, type Manifest, podSpecOf, readYaml } from './render.ts';
import { schemaErrors } from './schema.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const example = readYaml(join(gitopsDir, 'kustomization.yaml'))[0];
const imageOf = (name: string): string => {
  const entry = example.images.find((image: Manifest) => image.name === name);
  return `${entry.newName}:${entry.newTag}`;
};
const literal = (key: string): string => {
  const line: string = example.configMapGenerator.flatMap((generator: Manifest) => generator.literals ?? []).find((entry: string) => entry.startsWith(`${key}=`));
  return line.slice(key.length + 1);
};

/** A container's args with $(VAR) expanded from its envFrom ConfigMaps and env values, as the kubelet does. */
function expandedArgs(objects: Manifest[], container: Manifest): string[] {
  const environment: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const config = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === source.configMapRef?.name);
    Object.assign(environment, config?.data ?? {});
  }
  for (const variable of container.env ?? []) if (variable.value !== undefined) environment[variable.name] = variable.value;
  return (container.args ?? []).map((arg: string) => arg.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name) => environment[name] ?? whole));
}

/** The placeholders left in a render: `YOUR_…` and the stand-ins the components replace. */
const placeholders = (objects: Manifest[]): string[] => JSON.stringify(objects).match(/YOUR_[A-Z_]*|--model-id=EMBED_MODEL|embed-tei-ingest-image/g) ?? [];

const withComponent = (component: string) => gitopsAfter((kustomization) => kustomization.components.push(`../../components/${component}`));
const job = (objects: Manifest[], name: string) => objects.find((object) => object.kind === 'Job' && object.metadata.name === name);
const containerOf = (workload: Manifest, name: string) => podSpecOf(workload).containers.find((container: Manifest) => container.name === name);

describe.skipIf(Boolean(unavailable))('the one-off Jobs listed in the GitOps example', () => {
  it('the example names its backup bucket once, in its rag-backup ConfigMap, and patches no CronJob argument for it', () => {
    expect(literal('BACKUP_LOCATION')).toBe('gs://acme-rag-docs-backups/qdrant-snapshots/');
    expect(JSON.stringify(example.patches)).not.toMatch(/gs:\/\/|CronJob/);
  });

  it('components/restore: the restore Job with the example\'s ingest image and backup bucket, no placeholder', async () => {
    const objects = withComponent('restore');
    const restoreJob = job(objects, 'qdrant-restore');
    expect(restoreJob).toBeDefined();
    expect(placeholders(objects)).toEqual([]);
    expect(await schemaErrors([restoreJob])).toEqual([]);
    const restore = containerOf(restoreJob, 'restore');
    expect(restore.image).toBe(imageOf('rag-ingest'));
    expect(expandedArgs(objects, restore)).toEqual(['restore', '--from', literal('BACKUP_LOCATION')]);
    // The backup it restores is the one the CronJob writes.
    const backup = containerOf(objects.find((object) => object.kind === 'CronJob' && object.metadata.name === 'qdrant-backup'), 'backup');
    expect(expandedArgs(objects, backup).slice(0, 3)).toEqual(['backup', '--to', literal('BACKUP_LOCATION')]);
    expect(podSpecOf(restoreJob).serviceAccountName).toBe('qdrant-backup');
  });

  it('components/backfill: the Indexed Job with the example\'s ingest image, the deployed TEI, and the nightly CronJob suspended', async () => {
    const objects = withComponent('backfill');
    const backfill = job(objects, 'backfill');
    expect(backfill).toBeDefined();
    expect(job(objects, 'backfill-prune'), 'the prune is a later commit').toBeUndefined();
    expect(placeholders(objects)).toEqual([]);
    expect(await schemaErrors([backfill])).toEqual([]);
    expect(containerOf(backfill, 'ingest').image).toBe(imageOf('rag-ingest'));
    const tei = podSpecOf(backfill).initContainers.find((container: Manifest) => container.name === 'tei');
    const deployed = containerOf(objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'embed-tei-ingest'), 'tei');
    expect(tei.image).toBe(deployed.image);
    expect(tei.args).toEqual(deployed.args);
    const cronJob = objects.find((object) => object.kind === 'CronJob' && object.metadata.name === 'ingest');
    expect(cronJob.spec.suspend).toBe(true);
    const config = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === containerOf(backfill, 'ingest').envFrom[0].configMapRef.name);
    expect(config.data.GCS_BUCKET).toBe(literal('GCS_BUCKET'));
  });

  it('components/backfill-prune: the prune-only Job with the example\'s image, the CronJob still suspended', async () => {
    const objects = withComponent('backfill-prune');
    const prune = job(objects, 'backfill-prune');
    expect(placeholders(objects)).toEqual([]);
    expect(await schemaErrors([prune])).toEqual([]);
    expect(containerOf(prune, 'ingest').image).toBe(imageOf('rag-ingest'));
    expect(containerOf(prune, 'ingest').args).toEqual(['--prune-only']);
    expect(objects.find((object) => object.kind === 'CronJob' && object.metadata.name === 'ingest').spec.suspend).toBe(true);
  });

  it('the example as committed holds no one-off Job and a running nightly CronJob', () => {
    const objects = gitopsAfter();
    expect(objects.filter((object) => object.kind === 'Job')).toEqual([]);
    expect(objects.find((object) => object.kind === 'CronJob' && object.metadata.name === 'ingest').spec.suspend ?? false).toBe(false);
  });
});
