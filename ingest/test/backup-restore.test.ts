/**
 * Backup and restore of the Qdrant collection (ingest/src/backup-cli.ts, what the qdrant-backup CronJob
 * runs): Qdrant's snapshot API (https://api.qdrant.tech/v-1-17-x/api-reference/snapshots, faked in
 * services/retrieval/test/fakes/fake-qdrant-snapshots.ts) to the GCS JSON API (the repository's fake GCS
 * server, reached as @google-cloud/storage reaches an emulator: STORAGE_EMULATOR_HOST).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { createLogger, QdrantStore, TeiEmbedder } from '@rag/core';
import { backupCollection, QdrantCluster, restoreCollection, SnapshotArchive } from '@rag/core/backup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakeServers, startFakeServer } from '../../packages/core/test/adapters/fake-server.ts';
import { FakeGcsServer } from '../../packages/core/test/ingest/fake-gcs-server.ts';
import { FakeQdrant } from '../../services/retrieval/test/fakes/fake-qdrant.ts';
import { FakeQdrantSnapshots } from '../../services/retrieval/test/fakes/fake-qdrant-snapshots.ts';
import { teiEmbed } from '../../services/retrieval/test/fakes/fake-tei.ts';
import { StoreGate } from '../../services/retrieval/src/store-gate.ts';
import { handbookFolder, ingestFolder } from '../../services/retrieval/test/test-stack.ts';

const run = promisify(execFile);
const cli = new URL('../src/backup-cli.ts', import.meta.url).pathname;
const COLLECTION = 'docs-v2';

const qdrant = new FakeQdrant();
const snapshots = new FakeQdrantSnapshots(qdrant);
const gcs = new FakeGcsServer('acme-rag-backups');
let qdrantUrl: string;
let store: QdrantStore;

beforeAll(async () => {
  qdrantUrl = (await startFakeServer(snapshots.handle)).url;
  await gcs.start();
  const tei = await startFakeServer(teiEmbed);
  store = new QdrantStore({ url: qdrantUrl, collection: COLLECTION });
  const embedder = new TeiEmbedder({ url: tei.url, model: 'fake/hashed-bag-of-words' });
  await new StoreGate(store, embedder).ready();
  await ingestFolder(handbookFolder, store, embedder, createLogger('silent'));
});

afterAll(async () => {
  await closeFakeServers();
  await gcs.close();
});

async function backupCli(...args: string[]): Promise<string> {
  const env = { ...process.env, QDRANT_URL: qdrantUrl, QDRANT_COLLECTION: COLLECTION, STORAGE_EMULATOR_HOST: gcs.baseUrl, LOG_LEVEL: 'silent' };
  const { stdout } = await run(process.execPath, ['--import', 'tsx', cli, ...args], { env });
  return stdout;
}

/** The collection as a restore must bring it back: every point's id, payload and vectors. */
function collectionState(): string {
  const points = [...qdrant.collections.get(COLLECTION)!.points.values()].sort((a, b) => a.id.localeCompare(b.id));
  return JSON.stringify(points);
}

describe('backup and restore of the collection', () => {
  it('backs up to the bucket, leaves no snapshot on Qdrant, and restores a lost collection whole', async () => {
    const before = collectionState();
    const pointsBefore = await store.count();
    expect(pointsBefore).toBeGreaterThan(5);

    const backup = await backupCli('backup', '--to', 'gs://acme-rag-backups/qdrant/');
    expect(backup).toMatch(/^backup: gs:\/\/acme-rag-backups\/qdrant\/docs-v2\/\S+\/layout\.json \(\d+ bytes, 1 peers; 0 older objects removed\)\n$/);
    expect(snapshots.snapshots.get(COLLECTION), 'the snapshot volume is emptied once the copy is in the bucket').toEqual([]);

    qdrant.collections.delete(COLLECTION); // the disk is lost
    const restored = await backupCli('restore', '--from', 'gs://acme-rag-backups/qdrant');
    expect(restored).toMatch(/^restored: gs:\/\/acme-rag-backups\/qdrant\/docs-v2\/\S+\/layout\.json into docs-v2\n$/);
    expect(snapshots.uploads.at(-1)?.get('priority')).toBe('snapshot');
    expect(snapshots.uploads.at(-1)?.get('checksum')).toMatch(/^[0-9a-f]{64}$/);
    expect(collectionState()).toBe(before);
    expect(await store.count()).toBe(pointsBefore);
  }, 60_000);

  it('keeps the newest snapshots only, and restores the newest by default', async () => {
    const archive = new SnapshotArchive({ bucket: 'acme-rag-backups', prefix: 'nightly/', apiEndpoint: gcs.baseUrl });
    const api = new QdrantCluster({ url: qdrantUrl });
    const first = await backupCollection(api, archive, COLLECTION, 2, new Date('2026-12-01T02:17:00Z'));
    const points = qdrant.collections.get(COLLECTION)!.points;
    const removed = [...points.keys()][0]!;
    points.delete(removed); // a change after the first backup
    const second = await backupCollection(api, archive, COLLECTION, 2, new Date('2026-12-02T02:17:00Z'));
    const third = await backupCollection(api, archive, COLLECTION, 2, new Date('2026-12-03T02:17:00Z'));
    expect(third.pruned.sort()).toEqual([first.layout.peers[0]!.object, first.object].sort());
    expect((await archive.list(COLLECTION)).map((backup) => backup.layout)).toEqual([third.object, second.object]);

    qdrant.collections.delete(COLLECTION);
    expect(await restoreCollection(api, archive, COLLECTION)).toBe(third.object);
    expect(qdrant.collections.get(COLLECTION)!.points.has(removed)).toBe(false);
  }, 60_000);

  it('refuses a snapshot whose bytes changed in the bucket (Qdrant checks the checksum), leaving the collection as it was', async () => {
    const archive = new SnapshotArchive({ bucket: 'acme-rag-backups', prefix: 'tampered/', apiEndpoint: gcs.baseUrl });
    const api = new QdrantCluster({ url: qdrantUrl });
    const { layout } = await backupCollection(api, archive, COLLECTION, 1);
    const object = layout.peers[0]!.object;
    const stored = gcs.get(object)!;
    gcs.put(object, Buffer.from(stored.bytes.toString('utf8').replace('"points":[', '"points":[]')), stored.metadata);
    const before = collectionState();
    await expect(restoreCollection(api, archive, COLLECTION)).rejects.toMatchObject({ code: 'RAG_BACKUP_CHECKSUM_MISMATCH' });
    expect(collectionState()).toBe(before);
  }, 60_000);

  // Issue 32 (Medium 2): restore trusted whatever was newest in the bucket.
  it('refuses a planted snapshot without checksum metadata (RAG_BACKUP_UNVERIFIED) unless --allow-unverified is given', async () => {
    const archive = new SnapshotArchive({ bucket: 'acme-rag-backups', prefix: 'planted/', apiEndpoint: gcs.baseUrl });
    const api = new QdrantCluster({ url: qdrantUrl });
    const { layout } = await backupCollection(api, archive, COLLECTION, 3, new Date('2026-12-01T02:17:00Z'));
    // Newer than the real backup, in the single-object form older backups have, and no qdrant-checksum.
    const planted = `planted/${COLLECTION}/2099-01-01T00-00-00.000Z-planted.snapshot`;
    gcs.put(planted, gcs.get(layout.peers[0]!.object)!.bytes);
    const points = qdrant.collections.get(COLLECTION)!.points;
    const removed = [...points.keys()][0]!;
    points.delete(removed);
    const before = collectionState();
    await expect(restoreCollection(api, archive, COLLECTION)).rejects.toMatchObject({ code: 'RAG_BACKUP_UNVERIFIED', message: expect.stringContaining(planted) });
    expect(collectionState()).toBe(before);
    const refused = await backupCli('restore', '--from', 'gs://acme-rag-backups/planted/').catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringMatching(/^RAG_BACKUP_UNVERIFIED: /) });
    expect(collectionState()).toBe(before);
    expect(await backupCli('restore', '--from', 'gs://acme-rag-backups/planted/', '--allow-unverified')).toBe(`restored: gs://acme-rag-backups/${planted} into ${COLLECTION}\n`);
    expect(qdrant.collections.get(COLLECTION)!.points.has(removed)).toBe(true);
  }, 60_000);

  it('refuses a snapshot whose bytes and checksum metadata were both rewritten (the layout keeps the checksum the backup wrote)', async () => {
    const archive = new SnapshotArchive({ bucket: 'acme-rag-backups', prefix: 'forged/', apiEndpoint: gcs.baseUrl });
    const api = new QdrantCluster({ url: qdrantUrl });
    const { layout } = await backupCollection(api, archive, COLLECTION, 1);
    const object = layout.peers[0]!.object;
    const forged = Buffer.from(gcs.get(object)!.bytes.toString('utf8').replace(/"id":"[^"]+"/, '"id":"00000000-0000-0000-0000-000000000000"'));
    gcs.put(object, forged, { 'qdrant-checksum': createHash('sha256').update(forged).digest('hex') });
    const before = collectionState();
    await expect(restoreCollection(api, archive, COLLECTION)).rejects.toMatchObject({ code: 'RAG_BACKUP_CHECKSUM_MISMATCH' });
    expect(collectionState()).toBe(before);
  }, 60_000);
});

describe('backup --keep', () => {
  const names = async (archive: SnapshotArchive) => (await archive.list(COLLECTION)).map((backup) => backup.name);

  // Issue 32 (Medium 1): `--keep abc`, `0` or an empty value deleted every archived backup and exited 0.
  it.each([['abc'], ['0'], [''], ['-1'], ['2.5']])('refuses --keep %j with a usage error, exit 2, nothing backed up or removed', async (keep) => {
    const archive = new SnapshotArchive({ bucket: 'acme-rag-backups', prefix: 'keep-guard/', apiEndpoint: gcs.baseUrl });
    const api = new QdrantCluster({ url: qdrantUrl });
    if ((await names(archive)).length === 0) {
      await backupCollection(api, archive, COLLECTION, 5, new Date('2026-11-01T02:17:00Z'));
      await backupCollection(api, archive, COLLECTION, 5, new Date('2026-11-02T02:17:00Z'));
    }
    const before = await names(archive);
    const refused = await backupCli('backup', '--to', 'gs://acme-rag-backups/keep-guard/', `--keep=${keep}`).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringMatching(/^RAG_CONFIG_INVALID: .*--keep takes a positive integer/) });
    expect(await names(archive)).toEqual(before);
    await expect(backupCollection(api, archive, COLLECTION, Number(keep))).rejects.toMatchObject({ code: 'RAG_CONFIG_INVALID' });
    expect(await names(archive)).toEqual(before);
  }, 60_000);

  it('never removes the backup just written, even behind a folder named later than it', async () => {
    const archive = new SnapshotArchive({ bucket: 'acme-rag-backups', prefix: 'protect/', apiEndpoint: gcs.baseUrl });
    gcs.put(`protect/${COLLECTION}/9999-01-01T00-00-00.000Z/layout.json`, '{}');
    const written = await backupCollection(new QdrantCluster({ url: qdrantUrl }), archive, COLLECTION, 1, new Date('2026-12-05T02:17:00Z'));
    expect(written.pruned).toEqual([`protect/${COLLECTION}/9999-01-01T00-00-00.000Z/layout.json`]);
    expect(await names(archive)).toEqual(['2026-12-05T02-17-00.000Z']);
  }, 60_000);
});
