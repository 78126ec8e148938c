/**
 * The restore as a Job in the cluster (k8s/rag/components/restore, listed on the gke overlay by k8s/rag/jobs/restore), not from a laptop: each peer's snapshot goes back to
 * that peer by its own DNS name, which only resolves inside the cluster. Rendered on the configured gke overlay as
 * the runbook applies it; it must run what the backup runs (image, bucket, account, key) and be let through by the
 * network policies the backup's pods are (network-policies.ts evaluates them).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inRag, networkOf } from './network-policies.ts';
import { configuredOverlay, kustomize, kustomizeUnavailable, type Manifest, podSpecOf, ragDir, readKustomization, baseDir, runbookValues } from './render.ts';
import { schemaErrors } from './schema.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

describe('the restore Job', () => {
  it('is in no overlay: applying one never restores', () => {
    expect(readKustomization(baseDir).objects.some((object) => object.kind === 'Job')).toBe(false);
  });

  it.skipIf(Boolean(unavailable))('runs the backup\'s restore with the backup\'s image, bucket, account and full key, and reaches every peer', async () => {
    const objects: Manifest[] = kustomize(join(configuredOverlay().folder, '..', '..', 'jobs', 'restore'));
    const job = objects.find((object) => object.kind === 'Job' && object.metadata.name === 'qdrant-restore');
    const cron = objects.find((object) => object.kind === 'CronJob' && object.metadata.name === 'qdrant-backup');
    expect(await schemaErrors([job])).toEqual([]);
    expect(objects.filter((object) => object.metadata?.labels?.['rag.backup/step'] === 'restore').map((object) => object.kind)).toEqual(['Job']);
    const [restore] = podSpecOf(job).containers;
    const [backup] = podSpecOf(cron).containers;
    expect(restore.image).toBe(backup.image);
    expect(restore.command).toEqual(backup.command);
    expect(restore.args).toEqual(['restore', '--from', backup.args[2]]);
    expect(restore.args[2], 'rag-backup\'s BACKUP_LOCATION, expanded by Kubernetes').toBe('$(BACKUP_LOCATION)');
    expect(restore.envFrom).toEqual(backup.envFrom);
    const config = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === restore.envFrom[1].configMapRef.name);
    expect(config.metadata.name).toMatch(/^rag-backup-/);
    expect(config.data.BACKUP_LOCATION).toBe(`gs://${runbookValues.BUCKET}-backups/qdrant-snapshots/`);
    expect(restore.env.find((variable: Manifest) => variable.name === 'QDRANT_API_KEY').valueFrom.secretKeyRef).toEqual({ name: 'qdrant-key', key: 'api-key' });
    expect(podSpecOf(job).serviceAccountName).toBe(podSpecOf(cron).serviceAccountName);
    const { allowed } = networkOf(objects.filter((object) => object.kind === 'NetworkPolicy'));
    expect(allowed(inRag(job.spec.template.metadata.labels.app), inRag('qdrant'), 6333)).toBe(true);
    expect(allowed(inRag(job.spec.template.metadata.labels.app), { namespace: '', ip: '142.250.0.1' }, 443)).toBe(true);
    const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
    expect(runbook).toContain('kubectl apply -k k8s/rag/jobs/restore -l rag.backup/step=restore');
  });
});
