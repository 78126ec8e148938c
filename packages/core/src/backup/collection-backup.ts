import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RagError } from '../errors.ts';
import { MAX_LAYOUT_BYTES, parseBackupLayout, type BackupLayout } from './backup-layout.ts';
import type { QdrantCluster, QdrantPeer } from './qdrant-cluster.ts';
import { SnapshotArchive, type ArchivedSnapshot } from './snapshot-archive.ts';
import { expectChecksum, verifySnapshots } from './snapshot-verification.ts';

export type { BackupLayout } from './backup-layout.ts';

export interface RestoreOptions {
  /** Restore a snapshot that carries no checksum (`--allow-unverified`): nothing then tells it from a planted object. */
  allowUnverified?: boolean | undefined;
}

export interface BackupResult {
  /** The backup's layout object; its snapshots sit beside it. */
  object: string;
  layout: BackupLayout;
  size: number;
  pruned: string[];
}

/**
 * One backup: every peer that holds shards of the collection writes a snapshot of them to its own snapshot volume,
 * each is streamed to the bucket and deleted from its peer (a volume holds one snapshot at a time), then the layout
 * is written and the archive keeps `keep` backups.
 */
export async function backupCollection(cluster: QdrantCluster, archive: SnapshotArchive, collection: string, keep: number, now = new Date()): Promise<BackupResult> {
  // Before anything is written: keep 0 (or NaN from a bad flag) would prune every backup, this one included.
  if (!Number.isSafeInteger(keep) || keep < 1) throw new RagError('RAG_CONFIG_INVALID', `keep must be a positive integer (got ${keep}): nothing was backed up or removed.`);
  const backup = SnapshotArchive.backupName(now);
  const layout: BackupLayout = { collection, shardCount: 0, peers: [] };
  for (const peer of await cluster.peers()) {
    const shards = await cluster.localShards(peer, collection);
    if (!shards || shards.shards.length === 0) continue;
    layout.shardCount = shards.shardCount;
    const snapshots = cluster.snapshotsOf(peer);
    const snapshot = await snapshots.create(collection);
    try {
      const object = await archive.putSnapshot(collection, backup, peer.peerId, snapshot.name, await snapshots.download(collection, snapshot.name), snapshot.checksum);
      layout.peers.push({ peerId: peer.peerId, uri: peer.uri, shards: shards.shards, object, size: snapshot.size, ...(snapshot.checksum ? { checksum: snapshot.checksum } : {}) });
    } finally {
      await snapshots.delete(collection, snapshot.name);
    }
  }
  if (layout.peers.length === 0) throw new RagError('RAG_STORE_UNAVAILABLE', `No Qdrant peer holds collection ${collection}: nothing to back up.`);
  const object = await archive.putLayout(collection, backup, layout);
  const pruned = await archive.prune(collection, keep, backup);
  return { object, layout, size: layout.peers.reduce((total, peer) => total + peer.size, 0), pruned };
}

/**
 * Restores a collection from the bucket: the newest backup, or the one named (its folder name or any of its
 * objects). Each peer's snapshot goes back to the peer of the same URI, and only when that peer holds the same
 * shards of the collection now: a snapshot holds the shards of the peer that wrote it, so one uploaded elsewhere
 * would bring back shards that peer does not serve and leave others lost. A one-peer backup (and one made before
 * per-peer backups) also restores into a single node that lost the collection, which Qdrant then creates ("If the
 * collection does not exist, it will be created": snapshots/upload). Each file is downloaded to a temporary folder,
 * then uploaded with its checksum, which Qdrant verifies.
 *
 * Whatever is newest in the bucket is not trusted as such: every snapshot must carry the checksum the backup wrote
 * (its `qdrant-checksum` metadata, and the layout's record of it where the layout has one, equal), checked before
 * anything is restored, and every snapshot's bytes must hash to it before any peer is restored, and again once
 * downloaded, at the generation listed (RAG_BACKUP_UNVERIFIED, RAG_BACKUP_CHECKSUM_MISMATCH).
 * `allowUnverified` restores a snapshot without a checksum.
 */
export async function restoreCollection(cluster: QdrantCluster, archive: SnapshotArchive, collection: string, chosen?: string, options: RestoreOptions = {}): Promise<string> {
  const backups = await archive.list(collection);
  const backup = chosen ? backups.find((candidate) => candidate.name === chosen || candidate.layout === chosen || candidate.snapshots.some((snapshot) => snapshot.object === chosen)) : backups[0];
  if (!backup) throw new RagError('RAG_STORE_UNAVAILABLE', chosen ? `No archived backup ${chosen} for ${collection}.` : `No archived backup for ${collection}.`);
  const layout = backup.layout ? parseBackupLayout(await archive.readLayout(backup.layout, MAX_LAYOUT_BYTES), backup.layout) : undefined;
  const targets = await restoreTargets(cluster, collection, layout);
  const restores = (targets.length ? targets : [{ peer: (await cluster.peers())[0]!, object: backup.snapshots[0]!.object }]).map(({ peer, object }) => {
    const snapshot = backup.snapshots.find((candidate) => candidate.object === object);
    if (!snapshot) throw new RagError('RAG_BACKUP_UNVERIFIED', `Nothing was restored: the layout names ${object}, which is not in the bucket.`);
    return { peer, snapshot, checksum: expectedChecksum(snapshot, layout, options) };
  });
  await verifySnapshots(archive, restores);
  const folder = await mkdtemp(join(tmpdir(), 'rag-restore-'));
  try {
    for (const { peer, snapshot, checksum } of restores) {
      const path = join(folder, 'collection.snapshot');
      await archive.download(snapshot.object, path, snapshot.generation);
      if (checksum !== undefined) await expectChecksum(createReadStream(path), checksum, snapshot.object);
      await cluster.snapshotsOf(peer).recover(collection, path, checksum);
      await rm(path, { force: true });
    }
    return backup.layout ?? backup.snapshots[0]!.object;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * The checksum a snapshot must hash to: its metadata's, which the layout (when it records one) must repeat; an
 * object's metadata can be rewritten with the object, the layout is a second object to forge. Undefined only when
 * allowed.
 */
function expectedChecksum(snapshot: ArchivedSnapshot, layout: BackupLayout | undefined, options: RestoreOptions): string | undefined {
  const recorded = layout?.peers.find((peer) => peer.object === snapshot.object)?.checksum;
  if (snapshot.checksum === undefined) {
    if (options.allowUnverified) return recorded;
    throw new RagError('RAG_BACKUP_UNVERIFIED', `Nothing was restored: ${snapshot.object} carries no qdrant-checksum metadata, so nothing says this backup wrote it.`);
  }
  if (recorded !== undefined && recorded !== snapshot.checksum) {
    throw new RagError('RAG_BACKUP_CHECKSUM_MISMATCH', `Nothing was restored: ${snapshot.object}'s checksum metadata is not the one its layout recorded.`);
  }
  return snapshot.checksum;
}

/** Each recorded snapshot's peer now, after checking the cluster still lays the collection out as recorded. */
async function restoreTargets(cluster: QdrantCluster, collection: string, layout: BackupLayout | undefined): Promise<Array<{ peer: QdrantPeer; object: string }>> {
  const peers = await cluster.peers();
  if (!layout) return [];
  const single = layout.peers.length === 1 && peers.length === 1;
  const targets: Array<{ peer: QdrantPeer; object: string }> = [];
  const problems: string[] = [];
  for (const recorded of layout.peers) {
    const peer = single ? peers[0]! : peers.find((candidate) => candidate.uri === recorded.uri);
    if (!peer) {
      problems.push(`no peer ${recorded.uri} in the cluster (its peers: ${peers.map((candidate) => candidate.uri).join(', ')})`);
      continue;
    }
    const now = await cluster.localShards(peer, collection);
    if (!now && !single) problems.push(`${recorded.uri} holds no collection ${collection}: create it with ${layout.shardCount} shards laid out as the backup records, then restore`);
    else if (now && now.shards.join(',') !== recorded.shards.join(',')) problems.push(`${recorded.uri} holds shards [${now.shards.join(', ')}] of ${collection}, the backup [${recorded.shards.join(', ')}]`);
    targets.push({ peer, object: recorded.object });
  }
  if (problems.length) throw new RagError('RAG_BACKUP_LAYOUT_MISMATCH', `Nothing was restored: ${problems.join('; ')}.`);
  return targets;
}
