import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { RagError } from '../errors.ts';
import type { ArchivedSnapshot, SnapshotArchive } from './snapshot-archive.ts';

/** A snapshot to restore and the checksum it must hash to (undefined only with --allow-unverified). */
export interface SnapshotToVerify {
  snapshot: ArchivedSnapshot;
  checksum: string | undefined;
}

/**
 * Hashes every snapshot of a restore, streamed from the bucket (nothing on disk), before any peer is restored:
 * a restore that stopped at the third peer's altered snapshot would leave the first two replaced and the
 * cluster half at the backup. Reads pin the listed generation, which the restore downloads again.
 */
export async function verifySnapshots(archive: SnapshotArchive, snapshots: SnapshotToVerify[]): Promise<void> {
  for (const { snapshot, checksum } of snapshots) {
    if (checksum === undefined) continue;
    await expectChecksum(archive.read(snapshot.object, snapshot.generation), checksum, snapshot.object);
  }
}

/** Throws RAG_BACKUP_CHECKSUM_MISMATCH unless the stream's bytes hash to `checksum`. */
export async function expectChecksum(bytes: Readable | AsyncIterable<Uint8Array>, checksum: string, object: string): Promise<void> {
  if ((await sha256Of(bytes)) === checksum) return;
  throw new RagError('RAG_BACKUP_CHECKSUM_MISMATCH', `Nothing was restored: ${object} does not hash to the checksum its backup recorded.`);
}

async function sha256Of(bytes: Readable | AsyncIterable<Uint8Array>): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of bytes) hash.update(chunk as Uint8Array);
  return hash.digest('hex');
}
