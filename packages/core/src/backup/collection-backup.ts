import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RagError } from '../errors.ts';
import type { QdrantSnapshots } from './qdrant-snapshots.ts';
import type { SnapshotArchive } from './snapshot-archive.ts';

export interface BackupResult {
  object: string;
  size: number;
  pruned: string[];
}

/**
 * One backup: Qdrant writes a snapshot to its own snapshot volume, the file is streamed to the bucket,
 * then deleted from Qdrant (its volume holds one snapshot at a time), and the archive keeps `keep`.
 */
export async function backupCollection(snapshots: QdrantSnapshots, archive: SnapshotArchive, collection: string, keep: number): Promise<BackupResult> {
  const snapshot = await snapshots.create(collection);
  try {
    const object = await archive.put(collection, snapshot.name, await snapshots.download(collection, snapshot.name), snapshot.checksum);
    const pruned = await archive.prune(collection, keep);
    return { object, size: snapshot.size, pruned };
  } finally {
    await snapshots.delete(collection, snapshot.name);
  }
}

/**
 * Restores a collection from the bucket: the newest snapshot, or the object named. The file is downloaded
 * to a temporary folder, then uploaded to Qdrant with its checksum, which replaces the collection.
 */
export async function restoreCollection(snapshots: QdrantSnapshots, archive: SnapshotArchive, collection: string, object?: string): Promise<string> {
  const archived = await archive.list(collection);
  const chosen = object ? archived.find((snapshot) => snapshot.object === object) : archived[0];
  if (!chosen) throw new RagError('RAG_STORE_UNAVAILABLE', object ? `No archived snapshot ${object} for ${collection}.` : `No archived snapshot for ${collection}.`);
  const folder = await mkdtemp(join(tmpdir(), 'rag-restore-'));
  try {
    const path = join(folder, 'collection.snapshot');
    await archive.download(chosen.object, path);
    await snapshots.recover(collection, path, chosen.checksum);
    return chosen.object;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
