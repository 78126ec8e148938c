import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Storage } from '@google-cloud/storage';

export interface SnapshotArchiveOptions {
  bucket: string;
  /** Folder in the bucket, e.g. `qdrant-snapshots/`; each collection's snapshots sit under `<prefix><collection>/`. */
  prefix: string;
  /** Another endpoint than storage.googleapis.com (tests); STORAGE_EMULATOR_HOST works too. */
  apiEndpoint?: string | undefined;
}

export interface ArchivedSnapshot {
  object: string;
  /** Qdrant's SHA-256 of the file, kept as the object's custom metadata `qdrant-checksum`. */
  checksum: string | undefined;
}

const CHECKSUM_KEY = 'qdrant-checksum';

/**
 * Qdrant snapshots kept in a GCS bucket, one object each, named `<prefix><collection>/<UTC time>-<snapshot
 * name>` so that the names sort oldest to newest. Credentials are Application Default Credentials
 * (Workload Identity in the cluster).
 */
export class SnapshotArchive {
  private readonly storage: Storage;

  constructor(private readonly options: SnapshotArchiveOptions) {
    this.storage = new Storage(options.apiEndpoint ? { apiEndpoint: options.apiEndpoint } : {});
  }

  /** Streams the file into the bucket: nothing is written to the pod's disk. */
  async put(collection: string, snapshotName: string, file: ReadableStream<Uint8Array>, checksum: string | null | undefined, now = new Date()): Promise<string> {
    const object = `${this.folder(collection)}${now.toISOString().replaceAll(':', '-')}-${snapshotName}`;
    const destination = this.storage
      .bucket(this.options.bucket)
      .file(object)
      .createWriteStream({ resumable: false, metadata: { contentType: 'application/octet-stream', metadata: checksum ? { [CHECKSUM_KEY]: checksum } : {} } });
    await pipeline(Readable.fromWeb(file as WebReadableStream<Uint8Array>), destination);
    return object;
  }

  /** Every archived snapshot of the collection, newest first. */
  async list(collection: string): Promise<ArchivedSnapshot[]> {
    const [files] = await this.storage.bucket(this.options.bucket).getFiles({ prefix: this.folder(collection) });
    return files
      .map((file) => ({ object: file.name, checksum: file.metadata.metadata?.[CHECKSUM_KEY] as string | undefined }))
      .sort((a, b) => b.object.localeCompare(a.object));
  }

  async download(object: string, path: string): Promise<void> {
    await pipeline(this.storage.bucket(this.options.bucket).file(object).createReadStream(), createWriteStream(path));
  }

  /** Removes all but the newest `keep` snapshots of the collection; returns the objects removed. */
  async prune(collection: string, keep: number): Promise<string[]> {
    const old = (await this.list(collection)).slice(keep).map((snapshot) => snapshot.object);
    for (const object of old) await this.storage.bucket(this.options.bucket).file(object).delete();
    return old;
  }

  private folder(collection: string): string {
    return `${this.options.prefix}${collection}/`;
  }
}
