/**
 * The backup as deployed: the qdrant-backup CronJob runs the backup entry point of the ingest image into
 * the installation's backup bucket as rag-backup-sa, before the nightly ingest; Qdrant writes its
 * snapshots to a claim, never to an emptyDir whose size limit would evict Qdrant itself.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseDir, configuredOverlay, kustomizeUnavailable, type Manifest, podSpecOf, ragDir, readKustomization, runbookValues } from './render.ts';

const base = readKustomization(baseDir).objects;
const find = (objects: Manifest[], kind: string, name: string): Manifest => objects.find((object) => object.kind === kind && object.metadata.name === name);
const hour = (cronJob: Manifest) => Number(cronJob.spec.schedule.split(' ')[1]);

describe('the qdrant-backup CronJob', () => {
  it('runs dist/backup/backup.js from the ingest image, with the read-write Qdrant key', () => {
    const [container] = podSpecOf(find(base, 'CronJob', 'qdrant-backup')).containers;
    expect(container.image).toBe('rag-ingest');
    expect(container.command).toEqual(['node', 'dist/backup/backup.js']);
    expect(container.args.slice(0, 3)).toEqual(['backup', '--to', '$(BACKUP_LOCATION)']);
    expect(container.env.find((variable: Manifest) => variable.name === 'QDRANT_API_KEY').valueFrom.secretKeyRef).toEqual({ name: 'qdrant-key', key: 'api-key' });
  });

  it('finishes before the nightly ingest starts', () => {
    const backup = find(base, 'CronJob', 'qdrant-backup');
    const ingest = find(base, 'CronJob', 'ingest');
    const backupEnds = hour(backup) + (backup.spec.startingDeadlineSeconds + backup.spec.jobTemplate.spec.activeDeadlineSeconds) / 3600;
    expect(backupEnds).toBeLessThanOrEqual(hour(ingest));
  });

  it('gives each Qdrant peer a claim of its own for its snapshots, as large as its storage', () => {
    const set = find(base, 'StatefulSet', 'qdrant');
    const qdrant = podSpecOf(set);
    const mount = qdrant.containers[0].volumeMounts.find((candidate: Manifest) => candidate.mountPath === '/qdrant/snapshots');
    expect(qdrant.volumes.find((candidate: Manifest) => candidate.name === mount.name), 'not a pod volume (an emptyDir, or one claim shared by the peers)').toBeUndefined();
    const templates = new Map<string, Manifest>(set.spec.volumeClaimTemplates.map((template: Manifest) => [template.metadata.name, template]));
    const storage = (name: string) => templates.get(name)?.spec.resources.requests.storage;
    expect(storage(mount.name)).toBe(storage('qdrant-storage'));
  });

  it('writes down RPO and RTO in the runbook', () => {
    const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
    expect(runbook).toMatch(/\*\*RPO\*\*: 24 h/);
    expect(runbook).toMatch(/\*\*RTO\*\*/);
    expect(runbook).toContain('kubectl apply -k k8s/rag/jobs/restore -l rag.backup/step=restore');
  });

  it.skipIf(kustomizeUnavailable())('backs up to $BUCKET-backups as rag-backup-sa once configure.sh has run', () => {
    const { objects } = configuredOverlay();
    const [container] = podSpecOf(find(objects, 'CronJob', 'qdrant-backup')).containers;
    const config = find(objects, 'ConfigMap', container.envFrom.find((source: Manifest) => source.configMapRef.name.startsWith('rag-backup-')).configMapRef.name);
    expect(container.args[2]).toBe('$(BACKUP_LOCATION)');
    expect(config.data.BACKUP_LOCATION).toBe(`gs://${runbookValues.BUCKET}-backups/qdrant-snapshots/`);
    expect(find(objects, 'ServiceAccount', 'qdrant-backup').metadata.annotations['iam.gke.io/gcp-service-account']).toBe(`rag-backup-sa@${runbookValues.PROJECT_ID}.iam.gserviceaccount.com`);
    expect(find(objects, 'ServiceAccount', 'ingestion').metadata.annotations['iam.gke.io/gcp-service-account']).toBe(`rag-ingest-sa@${runbookValues.PROJECT_ID}.iam.gserviceaccount.com`);
  });
});
