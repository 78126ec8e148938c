import { chunkId } from '../chunking/chunk-id.ts';
import type { IndexedChunk, IndexedDocument } from '../domain.ts';
import type { VectorStore } from '../stores/vector-store.ts';
import type { DocumentMetadata } from '../search-filter/document-metadata.ts';
import { inSpan } from '../tracing/spans.ts';

interface PendingWrite {
  chunks: IndexedChunk[];
  staleIds: string[];
  /** A document whose groups alone changed: its points get these groups, nothing else is written. */
  groupsUpdate?: { source: string; groups: readonly string[] } | undefined;
  /** A document whose metadata changed without its content: its points get this metadata, nothing else is written. */
  metadataUpdate?: { source: string; metadata: DocumentMetadata } | undefined;
  settle: (error?: unknown) => void;
}

/** What a document's write does once it completes: its points written, then its stale ones removed. */
export interface WriteCompletion {
  done: Promise<void>;
}

/**
 * Groups the writes of several documents into one upsert and then one delete, one batch at a time.
 * A store commit per document made a 455-file corpus take minutes in LanceDB (every merge scans the
 * table, and concurrent commits forced full reloads); batches of a few hundred points take seconds.
 * Within a batch the order stays upsert, then delete the stale ids: never delete-before-write. A
 * failed batch fails each of its documents, whose previous points are then still in place.
 *
 * Each document's chunks are upserted last to first. A store may apply a long upsert in several
 * requests (Qdrant: 64 points each), so a process killed in the middle leaves a prefix of them
 * written; in reverse order, a document whose chunk 0 is not yet of the new version is never taken
 * for complete: chunk 0 is still the old version (mixed versions) or absent (see `isWhole`).
 *
 * Groups updates (a document whose access groups alone changed) go through the same queue, after the
 * batch's upserts and deletes, so that the store sees one write at a time.
 */
export class IngestWriter {
  private batch: PendingWrite[] = [];
  private batchPoints = 0;
  private lastFlush: Promise<void> = Promise.resolve();
  private flushesInFlight = 0;

  constructor(
    private readonly store: VectorStore,
    /** Points that trigger a batch write. */
    private readonly flushAtPoints: number,
  ) {}

  /**
   * Queues a document's write. Waits while two batches are already waiting for the store, so that
   * a slow store holds back embedding instead of letting vectors pile up in memory.
   */
  async enqueue(chunks: IndexedChunk[], staleIds: string[]): Promise<WriteCompletion> {
    return this.queue({ chunks, staleIds }, chunks.length + staleIds.length);
  }

  /** Queues rewriting the groups of a document's `points` points. */
  async enqueueGroups(source: string, groups: readonly string[], points: number): Promise<WriteCompletion> {
    return this.queue({ chunks: [], staleIds: [], groupsUpdate: { source, groups } }, points);
  }

  /** Queues rewriting the metadata of a document's `points` points (the store has setMetadata). */
  async enqueueMetadata(source: string, metadata: DocumentMetadata, points: number): Promise<WriteCompletion> {
    return this.queue({ chunks: [], staleIds: [], metadataUpdate: { source, metadata } }, points);
  }

  private async queue(write: Omit<PendingWrite, 'settle'>, points: number): Promise<WriteCompletion> {
    while (this.flushesInFlight >= 2) await this.lastFlush.catch(() => {});
    const done = new Promise<void>((resolve, reject) => {
      this.batch.push({ ...write, settle: (error) => (error === undefined ? resolve() : reject(error)) });
    });
    this.batchPoints += points;
    if (this.batchPoints >= this.flushAtPoints) void this.flush();
    return { done };
  }

  /** Writes what is queued; resolves when every batch queued so far has been written or has failed. */
  flush(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    this.batchPoints = 0;
    if (batch.length === 0) return this.lastFlush.catch(() => {});
    this.flushesInFlight += 1;
    this.lastFlush = this.lastFlush
      .catch(() => {})
      .then(() => this.write(batch))
      .finally(() => (this.flushesInFlight -= 1));
    return this.lastFlush.catch(() => {});
  }

  private async write(batch: PendingWrite[]): Promise<void> {
    const points = batch.flatMap((write) => [...write.chunks].reverse());
    const staleIds = batch.flatMap((write) => write.staleIds);
    const attributes = { 'db.system.name': this.store.name, 'db.operation.name': 'upsert', 'rag.upsert.points': points.length, 'rag.delete.points': staleIds.length };
    try {
      await inSpan(`upsert ${this.store.name}`, { attributes }, async () => {
        await this.store.upsert(points);
        await this.store.deleteByIds(staleIds);
        for (const { groupsUpdate } of batch) if (groupsUpdate) await this.store.setGroups(groupsUpdate.source, groupsUpdate.groups);
        for (const { metadataUpdate } of batch) if (metadataUpdate) await this.store.setMetadata?.(metadataUpdate.source, metadataUpdate.metadata);
      });
    } catch (error) {
      for (const write of batch) write.settle(error);
      return;
    }
    for (const write of batch) write.settle();
  }
}

/**
 * A stored document is whole when its points are exactly chunks 0 to n-1: a write cut short (see
 * IngestWriter) leaves a new document without its chunk 0, which its version alone would not reveal.
 */
export function isWhole(document: IndexedDocument): boolean {
  // Chunk ids derive from (source, chunk index), so the stored indexes tell the same without hashing.
  if (document.chunkIndexes) return isPermutationOfFirst(document.chunkIndexes, document.chunkIds.length);
  const ids = new Set(document.chunkIds);
  for (let index = 0; index < document.chunkIds.length; index += 1) if (!ids.has(chunkId(document.source, index))) return false;
  return true;
}

/** Whether `indexes` holds exactly 0 to n-1, each once. */
function isPermutationOfFirst(indexes: readonly number[], n: number): boolean {
  if (indexes.length !== n) return false;
  const seen = new Uint8Array(n);
  for (const index of indexes) {
    if (!(index >= 0 && index < n) || seen[index] === 1) return false;
    seen[index] = 1;
  }
  return true;
}
