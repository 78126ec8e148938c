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
  /** The object's generation when listed: reads pin it, so the bytes checked are the bytes restored. */
  generation?: string | undefined;
}

const CHECKSUM_KEY = 'qdrant-checksum';

/** One backup in the bucket: every peer's snapshot of the collection and the layout that says which shards each holds. */
export interface ArchivedBackup {
  /** The backup's folder name, its UTC time: names sort oldest to newest. */
  name: string;
  /** `<name>/layout.json`; undefined for a backup made before per-peer backups (one object, the whole single node). */
  layout: string | undefined;
  snapshots: ArchivedSnapshot[];
}

const LAYOUT = 'layout.json';

/**
 * Qdrant snapshots kept in a GCS bucket: each backup a folder `<prefix><collection>/<UTC time>/` holding one
 * snapshot per peer (`peer-<id>-<snapshot name>`, its SHA-256 as custom metadata) and `layout.json`. Backups of
 * the single node made before (`<prefix><collection>/<UTC time>-<snapshot name>`) are listed as backups of one
 * object without a layout. Credentials are Application Default Credentials (Workload Identity in the cluster).
 */
export class SnapshotArchive {
  private readonly storage: Storage;

  constructor(private readonly options: SnapshotArchiveOptions) {
    this.storage = new Storage(options.apiEndpoint ? { apiEndpoint: options.apiEndpoint } : {});
  }

  /** The folder name of a backup taken at `now`. */
  static backupName(now = new Date()): string {
    return now.toISOString().replaceAll(':', '-');
  }

  /** Streams one peer's snapshot into the backup's folder: nothing is written to the pod's disk. */
  async putSnapshot(collection: string, backup: string, peerId: number, snapshotName: string, file: ReadableStream<Uint8Array>, checksum: string | null | undefined): Promise<string> {
    const object = `${this.folder(collection)}${backup}/peer-${peerId}-${snapshotName}`;
    const destination = this.bucket()
      .file(object)
      .createWriteStream({ resumable: false, metadata: { contentType: 'application/octet-stream', metadata: checksum ? { [CHECKSUM_KEY]: checksum } : {} } });
    await pipeline(Readable.fromWeb(file as WebReadableStream<Uint8Array>), destination);
    return object;
  }

  /** Written last: a backup without its layout did not finish, and restore does not offer it. */
  async putLayout(collection: string, backup: string, layout: unknown): Promise<string> {
    const object = `${this.folder(collection)}${backup}/${LAYOUT}`;
    await this.bucket().file(object).save(JSON.stringify(layout, null, 2), { resumable: false, contentType: 'application/json' });
    return object;
  }

  /** A layout's text, read up to `maxBytes`; undefined past it (the rest is not read). */
  async readLayout(object: string, maxBytes: number): Promise<string | undefined> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of this.read(object)) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) return undefined;
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /** Every complete backup of the collection, newest first. */
  async list(collection: string): Promise<ArchivedBackup[]> {
    const folder = this.folder(collection);
    const [files] = await this.bucket().getFiles({ prefix: folder });
    const backups = new Map<string, ArchivedBackup>();
    for (const file of files) {
      const rest = file.name.slice(folder.length);
      const slash = rest.indexOf('/');
      const generation = file.metadata.generation === undefined ? undefined : String(file.metadata.generation);
      const snapshot = { object: file.name, checksum: file.metadata.metadata?.[CHECKSUM_KEY] as string | undefined, generation };
      if (slash < 0) {
        backups.set(rest, { name: rest, layout: undefined, snapshots: [snapshot] });
        continue;
      }
      const name = rest.slice(0, slash);
      const backup = backups.get(name) ?? { name, layout: undefined, snapshots: [] };
      if (rest.slice(slash + 1) === LAYOUT) backup.layout = file.name;
      else backup.snapshots.push(snapshot);
      backups.set(name, backup);
    }
    return [...backups.values()].filter((backup) => backup.layout || backup.snapshots.length === 1 && !backup.snapshots[0]!.object.slice(folder.length).includes('/')).sort((a, b) => b.name.localeCompare(a.name));
  }

  /** The object's bytes, at `generation` when given (a later write to the same name is not read). */
  read(object: string, generation?: string): Readable {
    return this.bucket().file(object, generation === undefined ? {} : { generation }).createReadStream();
  }

  async download(object: string, path: string, generation?: string): Promise<void> {
    await pipeline(this.read(object, generation), createWriteStream(path));
  }

  /**
   * Removes all but the newest `keep` backups of the collection (every object of each), never `protectedBackup` (the
   * one just written: a planted folder named later than it would otherwise count as newer); returns the objects removed.
   */
  async prune(collection: string, keep: number, protectedBackup?: string): Promise<string[]> {
    if (!Number.isSafeInteger(keep) || keep < 1) throw new RangeError(`keep must be a positive integer, got ${keep}`);
    const old = (await this.list(collection))
      .filter((backup) => backup.name !== protectedBackup)
      .slice(protectedBackup === undefined ? keep : keep - 1)
      .flatMap((backup) => [...backup.snapshots.map((snapshot) => snapshot.object), ...(backup.layout ? [backup.layout] : [])]);
    for (const object of old) await this.bucket().file(object).delete();
    return old;
  }

  private bucket() {
    return this.storage.bucket(this.options.bucket);
  }

  private folder(collection: string): string {
    return `${this.options.prefix}${collection}/`;
  }
}
