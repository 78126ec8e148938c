/**
 * VectorStore on Qdrant, through @qdrant/js-client-rest. One collection holds a named dense vector
 * `dense` (cosine) and a sparse vector `bm25` whose IDF Qdrant applies server-side; a hybrid search is
 * one Query API call with two prefetches fused by RRF on the server.
 * API: https://api.qdrant.tech/api-reference/search/query-points
 * Hybrid queries: https://qdrant.tech/documentation/concepts/hybrid-queries/
 *
 * The embedding model lock lives in the collection's own `metadata` (Qdrant ≥ 1.16,
 * https://qdrant.tech/documentation/concepts/collections/#collection-metadata): it is read by the
 * same GET /collections/{c} that open() needs anyway, and unlike a reserved point it never shows up
 * in searches, counts or scrolls. The dense vector's size is checked too, so a collection made by
 * other tools (no metadata) is still refused when its dimension differs.
 *
 * Access groups: each point's payload `groups` (keyword index) lists who may read it, empty for public;
 * every search filters on it inside each prefetch, so the fused top k holds only visible points.
 */
import { QdrantClient, QdrantClientResourceExhaustedError, QdrantClientTimeoutError, QdrantClientUnexpectedResponseError } from '@qdrant/js-client-rest';
import { normalizeGroups } from '../access/groups.ts';
import type { Chunk, ContextLock, EmbeddingModelLock, IndexedChunk, IndexedDocument, PageBox, SearchHit, SparseVector } from '../domain.ts';
import { RagError } from '../errors.ts';
import { isPlainRrf, QDRANT_RRF_K, type RrfParameters } from '../fusion/rrf.ts';
import {
  classifyFailure,
  describeEndpoint,
  HttpStatusError,
  InvalidResponseError,
  isRetryableFailure,
  retryAfterMs,
  timeoutError,
  withRetries,
} from '../http/remote-call.ts';
import { inBatches } from '../batches.ts';
import { chunkId } from '../chunking/chunk-id.ts';
import { untilAborted } from '../until-aborted.ts';
import { assertSameContext, UNRECORDED_NON_EMPTY } from './context-lock.ts';
import { addChunkToDocuments } from './indexed-documents.ts';
import { assertSameLanguage } from './language-lock.ts';
import { DEFAULT_BM25_LANGUAGE, type Bm25Language } from '../sparse/languages/bm25-languages.ts';
import type { HybridQuery, OpenOptions, VectorStore } from './vector-store.ts';
import type { DocumentMetadata } from '../search-filter/document-metadata.ts';
import { sourceGlobMatcher, titlePatternMatcher } from '../search-filter/filter-match.ts';
import { freshnessFormula, modifiedAtOfPayload } from './qdrant-freshness.ts';
import { payloadIndexesFor } from './qdrant-payload-indexes.ts';
import { denseStorageFields, type DenseVectorStorage } from './qdrant-vector-storage.ts';
import { filterConditions, METADATA_PAYLOAD_KEYS, metadataOfPayload, metadataPayload } from './qdrant-search-filter.ts';

export interface QdrantStoreOptions {
  url: string;
  apiKey?: string | undefined;
  collection?: string | undefined;
  /** Per request; the client aborts a request that takes longer. */
  timeoutMs?: number | undefined;
  upsertBatchSize?: number | undefined;
  retries?: number | undefined;
  /** First retry backoff; tests shorten it. */
  minBackoffMs?: number | undefined;
  /** BM25_LANGUAGE: recorded in a collection this store creates, checked against an existing one's (default english). */
  bm25Language?: Bm25Language | undefined;
  /** QDRANT_SHARD_NUMBER, QDRANT_REPLICATION_FACTOR, QDRANT_WRITE_CONSISTENCY_FACTOR: sent when creating the collection. */
  distribution?: CollectionDistribution | undefined;
  /** QDRANT_QUANTIZATION, QDRANT_VECTORS_ON_DISK: how the dense vectors of a collection this store creates are held. */
  vectorStorage?: DenseVectorStorage | undefined;
}

/** https://api.qdrant.tech/v-1-17-x/api-reference/collections/create-collection: shard_number, replication_factor, write_consistency_factor. */
export interface CollectionDistribution {
  shardNumber?: number | undefined;
  replicationFactor?: number | undefined;
  writeConsistencyFactor?: number | undefined;
}

/** What each point carries: the seed's payload names plus the two fields incremental sync needs. */
interface ChunkPayload {
  source: string;
  heading_path: string;
  chunk_index: number;
  text: string;
  ingested_at: string;
  content_hash: string;
  source_version: string | null;
  /** Groups allowed to read the point; [] (or, on points written before groups existed, absent): public. */
  groups: string[];
  /** The chunk's context (CONTEXT_MODE), embedded and encoded with `text` but never shown; '' for none. */
  context: string;
  /** Its pages or slides (Chunk.pages), [] included; absent for a document without pages and on points written before pages existed. */
  pages?: number[];
  /** Its boxes (Chunk.boxes); absent for a chunk without any and on points written before boxes existed. */
  boxes?: PageBox[];
}

interface ScoredPoint {
  id: string | number;
  score: number;
  payload?: Record<string, unknown> | null;
}

const DENSE = 'dense';
const SPARSE = 'bm25';
/** Keys of the model lock in the collection metadata. */
const MODEL_KEY = 'embedding_model';
const DIMENSION_KEY = 'embedding_dimension';
/** Keys of the context lock (CONTEXT_MODE and its prompt version) in the collection metadata. */
const CONTEXT_MODE_KEY = 'context_mode';
const CONTEXT_VERSION_KEY = 'context_prompt_version';
/** Key of the BM25 language in the collection metadata; absent (collections made before it, or by other tools): english. */
const LANGUAGE_KEY = 'bm25_language';
const GROUPS = 'groups';
/** Payload key of a chunk's pages (a JSON array of integers): only returned, never filtered on, so it has no index. */
const PAGES = 'pages';
/** Payload key of a chunk's boxes (a JSON array of PageBox objects): only returned, never filtered on. */
const BOXES = 'boxes';
const BOX_ORIGINS: ReadonlySet<unknown> = new Set(['TOPLEFT', 'BOTTOMLEFT']);
const SCROLL_PAGE = 512;
/** The most distinct sources a `source` glob is resolved against (one facet call); a larger collection needs a prefix layout. */
const MAX_FACET_SOURCES = 100_000;

export class QdrantStore implements VectorStore {
  readonly name = 'qdrant';
  readonly collection: string;
  readonly bm25Language: Bm25Language;
  private readonly client: QdrantClient;
  private readonly timeoutMs: number;
  /** What the opened collection holds: a sparse-only writer must not add points without dense vectors. */
  private denseModel: string | undefined;
  /** Opened without creating a missing collection (a dry run): it reads as empty. */
  private absent = false;
  /** The payload keys known to be indexed (GET /collections/{c}'s payload_schema, then what this process created). */
  private indexedFields: Set<string> | undefined;

  constructor(private readonly options: QdrantStoreOptions) {
    this.collection = options.collection ?? 'docs-v2';
    this.bm25Language = options.bm25Language ?? DEFAULT_BM25_LANGUAGE;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    // checkCompatibility would fire a GET / from the constructor and print a warning when Qdrant is
    // down; readiness is checkReady's job.
    this.client = new QdrantClient({ url: options.url, apiKey: options.apiKey, timeout: this.timeoutMs, checkCompatibility: false });
  }

  async open(lock: EmbeddingModelLock | null, options: OpenOptions = {}): Promise<void> {
    const existing = await this.collectionInfo();
    if (existing) {
      this.assertSameModel(existing, lock);
      this.assertSameLanguage(existing);
      // A collection made before access groups existed gets their index; a dry run writes nothing.
      if (options.create !== false && !hasPayloadIndex(existing, GROUPS)) await this.createGroupsIndexIfAllowed();
      if (options.context) await this.checkContext(existing, options.context, options.create !== false);
      return;
    }
    if (options.create === false) {
      this.absent = true;
      return;
    }
    if (await this.createCollection(lock, options.context)) return;
    // Another replica created it between our GET and PUT: check what it recorded.
    const created = await this.collectionInfo();
    if (created) this.assertSameModel(created, lock);
    if (created) this.assertSameLanguage(created);
    if (created && options.context) await this.checkContext(created, options.context, true);
  }

  async upsert(chunks: IndexedChunk[]): Promise<void> {
    if (this.denseModel && chunks.some((chunk) => chunk.dense === undefined)) {
      throw new RagError('RAG_MODEL_MISMATCH', `(Collection "${this.collection}" holds dense vectors of ${this.denseModel}; configure that embedder to write to it.)`);
    }
    if (chunks.some((chunk) => chunk.metadata !== undefined)) await this.ensurePayloadIndexes(chunks.map((chunk) => chunk.metadata));
    const batchSize = this.options.upsertBatchSize ?? 64;
    for (const batch of inBatches(chunks, batchSize)) {
      const points = batch.map(toPoint);
      await this.run(() => this.client.upsert(this.collection, { wait: true, points }));
    }
  }

  async deleteByIds(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.run(() => this.client.delete(this.collection, { wait: true, points: ids }));
  }

  async deleteBySource(source: string): Promise<void> {
    await this.run(() => this.client.delete(this.collection, { wait: true, filter: sourceFilter(source) }));
  }

  /** One set_payload call over the document's points, by the indexed `source`: only `groups` changes. */
  async setGroups(source: string, groups: readonly string[]): Promise<void> {
    await this.run(() => this.client.setPayload(this.collection, { wait: true, payload: { [GROUPS]: [...groups] }, filter: sourceFilter(source) }));
  }

  /** One set_payload call over the document's points: only the metadata keys change (`meta` as a whole). */
  async setMetadata(source: string, metadata: DocumentMetadata): Promise<void> {
    await this.ensurePayloadIndexes([metadata]);
    await this.run(() => this.client.setPayload(this.collection, { wait: true, payload: metadataPayload(metadata), filter: sourceFilter(source) }));
  }

  async listDocuments(): Promise<IndexedDocument[]> {
    if (this.absent) return [];
    const documents = new Map<string, IndexedDocument>();
    let offset: string | number | undefined;
    do {
      const page = await this.run(() =>
        this.client.scroll(this.collection, {
          limit: SCROLL_PAGE,
          offset,
          with_payload: ['source', 'chunk_index', 'content_hash', 'source_version', GROUPS, PAGES, ...METADATA_PAYLOAD_KEYS],
          with_vector: false,
        }),
      );
      for (const point of page.points) addToDocuments(documents, String(point.id), point.payload ?? {});
      offset = pageOffset(page.next_page_offset);
    } while (offset !== undefined);
    return [...documents.values()];
  }

  async search(query: HybridQuery, signal?: AbortSignal): Promise<SearchHit[]> {
    const sources = query.filter?.source === undefined ? undefined : await this.facetValuesMatching('source', sourceGlobMatcher(query.filter.source)!, signal);
    if (sources?.length === 0) return [];
    const titles = query.filter?.title === undefined ? undefined : await this.facetValuesMatching('title', titlePatternMatcher(query.filter.title)!, signal);
    if (titles?.length === 0) return [];
    const request = searchRequest(query, filterConditions(query.filter, sources, titles));
    if (!request) return [];
    const result = await this.run(() => this.client.query(this.collection, request), signal);
    return (result.points as ScoredPoint[]).map(toSearchHit);
  }

  /**
   * One scroll over these ids filtered by the searches' own visibility filter
   * (https://api.qdrant.tech/api-reference/points/scroll-points, `has_id`): Qdrant decides what the caller
   * may read, so a chunk is readable exactly when a search may return it, whatever its `groups` payload
   * holds (a string written by other tools matches `match.any` like a one-item list; a number never does).
   */
  async getChunks(ids: readonly string[], visibleGroups: readonly string[], signal?: AbortSignal): Promise<Chunk[]> {
    if (this.absent || ids.length === 0) return [];
    const filter = { must: [{ has_id: [...ids] }, visibilityFilter(visibleGroups)] };
    const page = await this.run(() => this.client.scroll(this.collection, { filter, limit: ids.length, with_payload: true, with_vector: false }), signal);
    return page.points.map((point) => {
      const { id, source, headingPath, chunkIndex, text, pages, boxes } = toSearchHit({ id: point.id, score: 0, payload: point.payload ?? null });
      return { id, source, headingPath, chunkIndex, text, ...(pages ? { pages } : {}), ...(boxes ? { boxes } : {}) };
    });
  }

  async sourceVersionOf(source: string, signal?: AbortSignal): Promise<string | undefined> {
    if (this.absent) return undefined;
    const points = await this.run(() => this.client.retrieve(this.collection, { ids: [chunkId(source, 0)], with_payload: ['source_version'], with_vector: false }), signal);
    const version = points[0]?.payload?.source_version;
    return typeof version === 'string' ? version : undefined;
  }

  async count(): Promise<number> {
    const result = await this.run(() => this.client.count(this.collection, { exact: true }));
    return result.count;
  }

  async checkReady(signal?: AbortSignal): Promise<void> {
    const info = await this.collectionInfo(signal);
    if (!info) {
      throw new RagError('RAG_STORE_NOT_READY', `(collection "${this.collection}" does not exist at ${describeEndpoint(this.options.url)})`);
    }
  }

  async close(): Promise<void> {
    // The client holds no resources we can release: its keep-alive sockets close when idle.
  }

  /** The collection's description, or null when it does not exist (404). */
  private async collectionInfo(signal?: AbortSignal): Promise<unknown> {
    try {
      return await this.run(() => this.client.getCollection(this.collection), signal);
    } catch (error) {
      if (isStatus(error, 404)) return null;
      throw error;
    }
  }

  /**
   * The indexed values of `key` (`source`, `title`) a glob matches: Qdrant has no glob condition, so the glob is
   * resolved against the collection's values (a facet on the keyword index, exact counts) and sent as `match.any`.
   * https://api.qdrant.tech/api-reference/points/facet
   */
  private async facetValuesMatching(key: string, matches: (value: string) => boolean, signal?: AbortSignal): Promise<string[]> {
    const facet = await this.run(() => this.client.facet(this.collection, { key, limit: MAX_FACET_SOURCES, exact: true }), signal);
    // Not .filter(matches): filter passes the index as a second argument.
    return facet.hits.map((hit) => String(hit.value)).filter((source) => matches(source));
  }

  /**
   * The search filters' indexes (qdrant-payload-indexes.ts), made by the writes that carry metadata: each missing
   * one once, a custom key when a document first brings it (a collection made before metadata gets them then;
   * opening never writes them, so a read-only service never tries). Idempotent: an index the collection lists is
   * never requested again.
   */
  private async ensurePayloadIndexes(metadata: Iterable<DocumentMetadata | undefined>): Promise<void> {
    const indexed = (this.indexedFields ??= new Set(Object.keys(asRecord(field(await this.collectionInfo(), 'payload_schema')))));
    for (const { field: name, schema } of payloadIndexesFor(metadata)) {
      if (indexed.has(name)) continue;
      await this.run(() => this.client.createPayloadIndex(this.collection, { wait: true, field_name: name, field_schema: schema })).catch((error: unknown) => {
        if (!isStatus(error, 403)) throw error;
      });
      indexed.add(name);
    }
  }

  /** Creates the collection and its `source` index; false when it already existed (409). */
  private async createCollection(lock: EmbeddingModelLock | null, context: ContextLock | undefined): Promise<boolean> {
    try {
      // The low-level API: the client's createCollection() drops the `metadata` field.
      await this.run(() =>
        this.client.api().createCollection({
          collection_name: this.collection,
          ...(lock ? { vectors: { [DENSE]: { size: lock.dimension, distance: 'Cosine', ...denseStorageFields(this.options.vectorStorage) } } } : {}),
          sparse_vectors: { [SPARSE]: { modifier: 'idf' } },
          ...distributionFields(this.options.distribution),
          metadata: { [MODEL_KEY]: lock?.model ?? null, [DIMENSION_KEY]: lock?.dimension ?? null, [LANGUAGE_KEY]: this.bm25Language, ...(context ? contextMetadata(context) : {}) },
        }),
      );
    } catch (error) {
      if (isStatus(error, 409)) return false;
      throw error;
    }
    // deleteBySource and setGroups filter on `source`, every search on `groups`: without a keyword index
    // such a filter scans every point.
    await this.createKeywordIndex('source');
    await this.createKeywordIndex(GROUPS);
    return true;
  }

  /**
   * See OpenOptions.context. A collection without the keys (made by the service, or before contexts
   * existed) gets them (PATCH /collections/{c} merges metadata): the writer's when it is empty, else `off`.
   */
  private async checkContext(info: unknown, wanted: ContextLock, write: boolean): Promise<void> {
    const metadata = field(field(info, 'config'), 'metadata');
    const mode = field(metadata, CONTEXT_MODE_KEY);
    const version = field(metadata, CONTEXT_VERSION_KEY);
    const recorded: ContextLock | undefined =
      mode === 'off' || mode === 'lead' || mode === 'llm'
        ? { mode, promptVersion: typeof version === 'string' ? version : null }
        : (await this.count()) === 0
          ? undefined
          : UNRECORDED_NON_EMPTY;
    if (recorded) assertSameContext(this.collection, recorded, wanted);
    if (mode === undefined && write) await this.run(() => this.client.updateCollection(this.collection, { metadata: contextMetadata(wanted) }));
  }

  /**
   * A read-only API key (a query service's) may not create it: searches then filter without the index
   * (correct, only slower) until a process holding a write key, the ingest job, opens the collection.
   */
  private async createGroupsIndexIfAllowed(): Promise<void> {
    await this.createKeywordIndex(GROUPS).catch((error: unknown) => {
      if (!isStatus(error, 403)) throw error;
    });
  }

  private async createKeywordIndex(field: string): Promise<void> {
    await this.run(() => this.client.createPayloadIndex(this.collection, { wait: true, field_name: field, field_schema: 'keyword' }));
  }

  /** See language-lock.ts: readers and writers alike; a collection without the key counts as english. */
  private assertSameLanguage(info: unknown): void {
    assertSameLanguage(this.collection, field(field(field(info, 'config'), 'metadata'), LANGUAGE_KEY), this.bm25Language);
  }

  private assertSameModel(info: unknown, lock: EmbeddingModelLock | null): void {
    const recorded = recordedLock(info);
    if (recorded.denseSize !== undefined) this.denseModel = recorded.model ?? `${recorded.denseSize}-dimension vectors`;
    // Without a lock (no embedder) only the sparse vectors are read, which every collection has.
    if (!lock) return;
    const problem =
      recorded.denseSize === undefined
        ? 'has no dense vectors (it was built without an embedding model)'
        : recorded.model && recorded.model !== lock.model
          ? `was built with ${recorded.model} (${recorded.denseSize} dimensions)`
          : recorded.denseSize !== lock.dimension
            ? `holds ${recorded.denseSize}-dimension vectors`
            : undefined;
    if (problem) {
      throw new RagError('RAG_MODEL_MISMATCH', `(Collection "${this.collection}" ${problem}; configured: ${lock.model}, ${lock.dimension} dimensions.)`);
    }
  }

  /** Retries and classifies one client call; the caller's signal ends the wait at once. */
  private async run<T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const attempt = () => call().catch((error: unknown) => Promise.reject(normalizeClientError(error)));
    const retried = withRetries(attempt, {
      retries: this.options.retries ?? 2,
      signal,
      minBackoffMs: this.options.minBackoffMs,
      isRetryable: isRetryableFailure,
      retryAfterMs,
    });
    try {
      // The client's timeout owns each request's signal, so a caller abort cannot reach the socket;
      // we stop waiting instead and the request ends at the timeout at worst.
      return await (signal ? untilAborted(retried, signal) : retried);
    } catch (error) {
      const secrets = this.options.apiKey ? { 'api-key': this.options.apiKey } : undefined; // redacted from details
      throw classifyFailure({ dependency: 'store', url: this.options.url, timeoutMs: this.timeoutMs, signal, headers: secrets }, error);
    }
  }
}

function toPoint(chunk: IndexedChunk) {
  const payload: ChunkPayload = {
    source: chunk.source,
    heading_path: chunk.headingPath,
    chunk_index: chunk.chunkIndex,
    text: chunk.text,
    ingested_at: chunk.ingestedAt,
    content_hash: chunk.contentHash,
    source_version: chunk.sourceVersion ?? null,
    groups: [...chunk.groups],
    context: chunk.context ?? '',
    ...(chunk.pages ? { [PAGES]: [...chunk.pages] } : {}),
    ...(chunk.boxes?.length ? { [BOXES]: [...chunk.boxes] } : {}),
  };
  const vector = {
    ...(chunk.dense ? { [DENSE]: chunk.dense } : {}),
    [SPARSE]: { indices: chunk.sparse.indices, values: chunk.sparse.values },
  };
  return { id: chunk.id, vector, payload: { ...payload, ...metadataPayload(chunk.metadata) } };
}

function contextMetadata(context: ContextLock) {
  return { [CONTEXT_MODE_KEY]: context.mode, [CONTEXT_VERSION_KEY]: context.promptVersion };
}

function sourceFilter(source: string) {
  return { must: [{ key: 'source', match: { value: source } }] };
}

/**
 * Public points or points sharing a group with the caller. `is_empty` matches a missing key, null and [];
 * `match.any` on an array matches when one of its values is listed.
 * https://qdrant.tech/documentation/concepts/filtering/#is-empty, #match-any
 */
function visibilityFilter(visibleGroups: readonly string[]) {
  const isPublic = { is_empty: { key: GROUPS } };
  return { should: visibleGroups.length > 0 ? [isPublic, { key: GROUPS, match: { any: [...visibleGroups] } }] : [isPublic] };
}

/**
 * Hybrid: two prefetches fused by Qdrant's RRF; each prefetch limit must be at least limit + offset.
 * Sparse only (no embedder): one query on `bm25`. A sparse query with no terms (only stopwords)
 * is left out: it cannot match anything. The visibility filter sits in each prefetch, so each leg's
 * candidates are visible ones, and on the fused query too. Qdrant's IDF stays that of the whole
 * collection whatever the filter, as the embedded store's does.
 *
 * With a freshness boost the fused legs become one prefetch (RRF, `candidates` long; sparse only: RRF over its
 * one leg, so the boost adds to a rank score in both modes) and the query is the boost's formula over it.
 */
function searchRequest(query: HybridQuery, conditions: Array<Record<string, unknown>> = []) {
  // The caller's prefetchLimit as is (the Retriever sets its floor): the embedded store takes the same
  // candidates, so both fuse the same lists (the Qdrant Edge parity test diverged with a floor here).
  const candidates = Math.max(query.prefetchLimit, query.limit);
  const sparse: SparseVector | undefined = query.sparse.indices.length > 0 ? { indices: query.sparse.indices, values: query.sparse.values } : undefined;
  // The search filter's conditions AND the visibility `should`, in every prefetch and on the root.
  const filter = conditions.length > 0 ? { must: conditions, ...visibilityFilter(query.visibleGroups) } : visibilityFilter(query.visibleGroups);
  const legs = [
    ...(query.dense ? [{ query: query.dense, using: DENSE, filter, limit: candidates }] : []),
    ...(sparse ? [{ query: sparse, using: SPARSE, filter, limit: candidates }] : []),
  ];
  if (legs.length === 0) return undefined;
  if (query.freshness) {
    const fusion = query.dense ? fusionQuery(query.fusion, sparse !== undefined) : singleLegFusion(query.fusion);
    return { prefetch: [{ prefetch: legs, query: fusion, limit: candidates }], query: freshnessFormula(query.freshness), filter, limit: query.limit, with_payload: true };
  }
  if (query.dense) return { prefetch: legs, query: fusionQuery(query.fusion, sparse !== undefined), filter, limit: query.limit, with_payload: true };
  return { query: sparse!, using: SPARSE, filter, limit: query.limit, with_payload: true };
}

/** RRF over the sparse leg alone (a freshness boost in sparse-only mode): its k; a lone leg's weight is left out. */
function singleLegFusion(fusion: RrfParameters | undefined) {
  return !fusion || fusion.k === QDRANT_RRF_K ? { fusion: 'rrf' as const } : { rrf: { k: fusion.k } };
}

/**
 * Plain RRF stays `{fusion: "rrf"}`, which every Qdrant since 1.10 takes; a k other than 2 is sent as
 * `{rrf: {k}}` (≥ 1.16) and weights other than 1 as `{rrf: {weights}}` (≥ 1.17), one per prefetch, in
 * prefetch order (the sparse one is left out with its prefetch when the query has no terms).
 * https://api.qdrant.tech/api-reference/search/query-points (RrfQuery, Rrf: k, weights)
 */
function fusionQuery(fusion: RrfParameters | undefined, withSparse: boolean) {
  if (!fusion || isPlainRrf(fusion)) return { fusion: 'rrf' as const };
  const weights = withSparse ? [fusion.weights.dense, fusion.weights.sparse] : [fusion.weights.dense];
  const weighted = weights.some((weight) => weight !== 1);
  if (fusion.k === QDRANT_RRF_K && !weighted) return { fusion: 'rrf' as const };
  return { rrf: { ...(fusion.k === QDRANT_RRF_K ? {} : { k: fusion.k }), ...(weighted ? { weights } : {}) } };
}

function toSearchHit(point: ScoredPoint): SearchHit {
  const payload = point.payload ?? {};
  return {
    id: String(point.id),
    source: stringField(payload.source),
    headingPath: stringField(payload.heading_path),
    chunkIndex: typeof payload.chunk_index === 'number' ? payload.chunk_index : 0,
    text: stringField(payload.text),
    score: point.score,
    fusionScore: point.score,
    ...pagesOfPayload(payload),
    ...boxesOfPayload(payload),
    modifiedAt: modifiedAtOfPayload(payload),
    ...(typeof payload.title === 'string' ? { title: payload.title } : {}),
  };
}

function addToDocuments(documents: Map<string, IndexedDocument>, id: string, payload: Record<string, unknown>): void {
  const sourceVersion = typeof payload.source_version === 'string' ? payload.source_version : undefined;
  const groups = Array.isArray(payload.groups) ? normalizeGroups(payload.groups.filter((group): group is string => typeof group === 'string')) : [];
  const index = Number.isInteger(payload.chunk_index) ? (payload.chunk_index as number) : undefined;
  addChunkToDocuments(documents, stringField(payload.source), { id, index, pagesRecorded: Array.isArray(payload[PAGES]) }, { contentHash: stringField(payload.content_hash), sourceVersion }, groups, metadataOfPayload(payload));
}

/** A hit's boxes from its payload; none when absent, empty or not a list of boxes (a point written by other tools). */
function boxesOfPayload(payload: Record<string, unknown>): { boxes?: PageBox[] } {
  const boxes = payload[BOXES];
  if (!Array.isArray(boxes) || boxes.length === 0 || !boxes.every(isPageBox)) return {};
  return { boxes: boxes as PageBox[] };
}

function isPageBox(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { page, l, t, r, b, origin } = value as Record<string, unknown>;
  return Number.isInteger(page) && (page as number) >= 1 && [l, t, r, b].every((coordinate) => typeof coordinate === 'number') && BOX_ORIGINS.has(origin);
}

/** A hit's pages from its payload; none when absent, empty or not a list of page numbers (a point written by other tools). */
function pagesOfPayload(payload: Record<string, unknown>): { pages?: number[] } {
  const pages = payload[PAGES];
  if (!Array.isArray(pages) || pages.length === 0 || !pages.every((page) => Number.isInteger(page) && page >= 1)) return {};
  return { pages: pages as number[] };
}

function pageOffset(next: unknown): string | number | undefined {
  return typeof next === 'string' || typeof next === 'number' ? next : undefined;
}

/** Whether GET /collections/{c}'s `result.payload_schema` lists an index on `key`. */
function hasPayloadIndex(info: unknown, key: string): boolean {
  return field(field(info, 'payload_schema'), key) !== undefined;
}

/** The model and dense size a collection records, from GET /collections/{c}'s `result.config`. */
function recordedLock(info: unknown): { model: string | undefined; denseSize: number | undefined } {
  const config = field(info, 'config');
  const metadata = field(config, 'metadata');
  const model = field(metadata, MODEL_KEY);
  const size = field(field(field(field(config, 'params'), 'vectors'), DENSE), 'size');
  return { model: typeof model === 'string' ? model : undefined, denseSize: typeof size === 'number' ? size : undefined };
}

/**
 * Maps the client's errors onto the shapes remote-call classifies: its ApiError (any non-2xx, with
 * `status` and Qdrant's `{status: {error}}` body), QdrantClientTimeoutError, the 429 it converts when
 * Retry-After is set, a JSON body that does not parse, and fetch's own TypeError (left as is).
 */
function normalizeClientError(error: unknown): unknown {
  if (error instanceof QdrantClientTimeoutError) return timeoutError(error);
  if (error instanceof QdrantClientResourceExhaustedError) {
    return new HttpStatusError(429, error.message, error.retry_after * 1000);
  }
  if (error instanceof QdrantClientUnexpectedResponseError) return new InvalidResponseError('an unexpected response', { cause: error });
  if (error instanceof SyntaxError) return new InvalidResponseError('invalid JSON', { cause: error });
  const status = field(error, 'status');
  if (typeof status === 'number') {
    const body = field(error, 'data');
    const message = field(field(body, 'status'), 'error');
    return new HttpStatusError(status, typeof message === 'string' ? message : typeof body === 'string' ? body.slice(0, 200) : '', undefined);
  }
  return error;
}

function isStatus(error: unknown, status: number): boolean {
  return error instanceof RagError && error.cause instanceof HttpStatusError && error.cause.status === status;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function stringField(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The create request's distribution fields, only those set (Qdrant's defaults otherwise). */
function distributionFields(distribution: CollectionDistribution | undefined): Record<string, number> {
  const fields = { shard_number: distribution?.shardNumber, replication_factor: distribution?.replicationFactor, write_consistency_factor: distribution?.writeConsistencyFactor };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Record<string, number>;
}
