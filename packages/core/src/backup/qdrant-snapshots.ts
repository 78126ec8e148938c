import { openAsBlob } from 'node:fs';
import { RagError } from '../errors.ts';
import { httpDispatcher } from '../http/http-dispatcher.ts';

/** What Qdrant answers for a snapshot (https://api.qdrant.tech/v-1-17-x/api-reference/snapshots/create-snapshot). */
export interface SnapshotDescription {
  name: string;
  size: number;
  creation_time?: string | null;
  /** SHA-256 of the file, hex: given back on recovery, Qdrant refuses a file that does not match. */
  checksum?: string | null;
}

export interface QdrantSnapshotsOptions {
  url: string;
  apiKey?: string | undefined;
  /** Per call; a snapshot of a large collection takes minutes to write (default 30 min). */
  timeoutMs?: number | undefined;
}

/**
 * Collection snapshots through Qdrant's REST API (v1.17): create, download, delete, and recovery from an
 * uploaded file. Create, download and delete need the read-write key; recovery needs the full key
 * (Qdrant's tests/auth_tests list upload and recover as manage-only).
 */
export class QdrantSnapshots {
  constructor(private readonly options: QdrantSnapshotsOptions) {}

  /** `POST /collections/{c}/snapshots?wait=true`: the snapshot is written to Qdrant's snapshots_path. */
  async create(collection: string): Promise<SnapshotDescription> {
    const response = await this.call('POST', `${this.collectionPath(collection)}/snapshots?wait=true`);
    return ((await response.json()) as { result: SnapshotDescription }).result;
  }

  /** `GET /collections/{c}/snapshots/{name}`: the file, streamed (never held in memory). */
  async download(collection: string, name: string): Promise<ReadableStream<Uint8Array>> {
    const response = await this.call('GET', `${this.collectionPath(collection)}/snapshots/${encodeURIComponent(name)}`);
    if (!response.body) throw new RagError('RAG_STORE_UNAVAILABLE', `Qdrant sent snapshot ${name} without a body.`);
    return response.body;
  }

  /** `DELETE /collections/{c}/snapshots/{name}`: frees Qdrant's snapshot volume once the copy is safe. */
  async delete(collection: string, name: string): Promise<void> {
    await this.call('DELETE', `${this.collectionPath(collection)}/snapshots/${encodeURIComponent(name)}?wait=true`);
  }

  /**
   * `POST /collections/{c}/snapshots/upload?priority=snapshot`: replaces the collection (or creates it)
   * with the file's content; the snapshot wins over whatever the node holds. The file is read from disk
   * as it is sent.
   */
  async recover(collection: string, path: string, checksum?: string | null): Promise<void> {
    const form = new FormData();
    form.set('snapshot', await openAsBlob(path), 'collection.snapshot');
    const query = new URLSearchParams({ wait: 'true', priority: 'snapshot', ...(checksum ? { checksum } : {}) });
    await this.call('POST', `${this.collectionPath(collection)}/snapshots/upload?${query}`, form);
  }

  private collectionPath(collection: string): string {
    return `${this.options.url.replace(/\/$/, '')}/collections/${encodeURIComponent(collection)}`;
  }

  private async call(method: string, url: string, body?: FormData): Promise<Response> {
    const headers: Record<string, string> = this.options.apiKey ? { 'api-key': this.options.apiKey } : {};
    const response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.options.timeoutMs ?? 30 * 60_000), dispatcher: httpDispatcher }).catch((error: unknown) => {
      throw new RagError('RAG_STORE_UNAVAILABLE', `Cannot reach Qdrant for ${method} ${new URL(url).pathname}: ${(error as Error).message}`, { cause: error });
    });
    if (!response.ok) {
      const detail = await response.text().catch(() => '');
      throw new RagError('RAG_STORE_UNAVAILABLE', `Qdrant answered ${response.status} to ${method} ${new URL(url).pathname}: ${detail.slice(0, 300)}`);
    }
    return response;
  }
}
