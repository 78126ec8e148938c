import type { Chunk, ContextLock, EmbeddingModelLock, IndexedChunk, IndexedDocument, SearchHit, SparseVector } from '../domain.ts';
import type { RrfParameters } from '../fusion/rrf.ts';
import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';
import type { DocumentMetadata } from '../search-filter/document-metadata.ts';
import type { SearchFilter } from '../search-filter/search-controls.ts';
import type { FreshnessBoost } from '../search-filter/freshness.ts';

export interface HybridQuery {
  /** Absent when no embedder is configured: the search is then sparse only. */
  dense?: number[] | undefined;
  sparse: SparseVector;
  /** How many fused results to return. */
  limit: number;
  /** How many candidates each leg (dense, sparse) contributes before fusion; at least `limit`. */
  prefetchLimit: number;
  /**
   * The caller's groups: only public chunks and chunks sharing one of these groups may be returned
   * (PUBLIC_ONLY: public ones). Applied inside each leg's search, so `limit` is filled with visible chunks.
   */
  visibleGroups: readonly string[];
  /** How the dense and sparse legs are fused (RRF_K, FUSION_WEIGHTS); absent: Qdrant's plain RRF (k = 2, weights 1). */
  fusion?: RrfParameters | undefined;
  /**
   * Search filters (source glob, type, modified time, custom fields): applied inside each leg's search alongside
   * `visibleGroups`, so `limit` is filled with matching chunks. Absent: no restriction.
   */
  filter?: SearchFilter | undefined;
  /**
   * The recency boost (search-filter/freshness.ts): the fused candidates (the `prefetchLimit` best by RRF, sparse
   * only: by RRF over its one leg) are scored `rank score + weight · decay(modified)` and the `limit` best returned.
   */
  freshness?: FreshnessBoost | undefined;
}

export interface OpenOptions {
  /** false (a dry run): a missing collection is not created; the store then reads as empty and refuses writes. */
  create?: boolean;
  /**
   * How the writer makes chunk contexts (CONTEXT_MODE): a collection that records another is refused with
   * RAG_CONTEXT_MISMATCH. One that records none takes it when empty, and counts as `off` otherwise (it was
   * filled before contexts existed). Readers leave it out: queries are never contextualized.
   */
  context?: ContextLock | undefined;
}

export interface VectorStore {
  readonly name: string;
  /**
   * The BM25 language this store was configured with (BM25_LANGUAGE), checked against the collection's record
   * by `open` (RAG_LANGUAGE_MISMATCH): sparse vectors written to it and queries sent to it are encoded in it.
   * Absent (test doubles): english.
   */
  readonly bm25Language?: Bm25Language;
  /**
   * Opens the collection, creating it when missing. With a model lock, a collection built with
   * another model is refused with RAG_MODEL_MISMATCH; `null` means sparse only.
   */
  open(lock: EmbeddingModelLock | null, options?: OpenOptions): Promise<void>;
  upsert(chunks: IndexedChunk[]): Promise<void>;
  deleteByIds(ids: string[]): Promise<void>;
  deleteBySource(source: string): Promise<void>;
  /** Rewrites the access groups of every chunk of a document, leaving its text and vectors as they are. */
  setGroups(source: string, groups: readonly string[]): Promise<void>;
  /** Rewrites the metadata of every chunk of a document (what filters test), leaving its text and vectors as they are. */
  setMetadata?(source: string, metadata: DocumentMetadata): Promise<void>;
  /** Every indexed document with its version and chunk ids, for incremental sync. */
  listDocuments(): Promise<IndexedDocument[]>;
  search(query: HybridQuery, signal?: AbortSignal): Promise<SearchHit[]>;
  /**
   * The chunks with these ids that exist and that `visibleGroups` may read (see HybridQuery.visibleGroups);
   * the others are left out, so a hidden chunk reads exactly as a missing one. Any order.
   */
  getChunks(ids: readonly string[], visibleGroups: readonly string[], signal?: AbortSignal): Promise<Chunk[]>;
  /**
   * The `source_version` the ingest recorded for a document (on its chunk 0), undefined when none was recorded or
   * the document is not indexed; GET /documents compares the file it serves with it. Not access-checked: ask after
   * the caller's right to the document has been checked.
   */
  sourceVersionOf?(source: string, signal?: AbortSignal): Promise<string | undefined>;
  count(): Promise<number>;
  /**
   * Storage housekeeping after a run that wrote something (the embedded store merges the small files
   * each write leaves and drops old versions); returns a line for the log. Servers manage their own.
   */
  compact?(): Promise<string>;
  /**
   * Loads what queries need in memory (the embedded store's search view) ahead of the first one; a
   * server calls it once the store is open. Stores that keep nothing in memory leave it out.
   */
  prepareForSearch?(): Promise<void>;
  /**
   * After an ingest run: saves what prepareForSearch then loads quickly (the embedded store's search view),
   * unless what is saved is already current; returns a line for the log, or undefined when nothing was saved.
   */
  saveSearchView?(): Promise<string | undefined>;
  /**
   * Tells other processes reading the same embedded index that a sync is writing, until the returned function
   * is called: they keep answering from the view they hold rather than reloading at every intermediate version.
   */
  markWriting?(): Promise<() => Promise<void>>;
  /** Throws a RagError naming the problem when the store cannot serve queries. */
  checkReady(signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}
