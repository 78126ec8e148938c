import { extname } from 'node:path';
import pLimit from 'p-limit';
import { sameGroups } from '../access/groups.ts';
import { sameMetadata } from '../search-filter/document-metadata.ts';
import { documentTitle } from '../search-filter/document-title.ts';
import { pagesDocuments, type Converter } from '../converters/converter.ts';
import { extensionOf, type ConverterRegistry } from '../converters/converter-registry.ts';
import type { ChunkContexts, ContextDocument, DocumentContexts } from '../context/chunk-contexts.ts';
import type { Chunk, IndexedDocument } from '../domain.ts';
import type { Embedder } from '../embedders/embedder.ts';
import { isRagError, RagError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { DocumentSource, SourceDocument } from '../sources/document-source.ts';
import type { VectorStore } from '../stores/vector-store.ts';
import { type DocumentPreparation, InProcessPreparation } from './document-preparation.ts';
import { contentHashOf, vectorizeChunks, type ChunkOptions } from './index-document.ts';
import { IngestSummary } from './ingest-summary.ts';
import { IngestWriter, isWhole, type WriteCompletion } from './ingest-writer.ts';
import { pruneDeleted } from './prune.ts';
import { inShard, type Shard } from './shard.ts';
import { inSpan, inStreamSpan, suiteTracer } from '../tracing/spans.ts';

export interface IngestOptions {
  source: DocumentSource;
  store: VectorStore;
  embedder?: Embedder | undefined;
  converters: ConverterRegistry;
  /** Where documents are converted and chunked: worker threads (WorkerPreparation, the ingest job's), or by default this thread. */
  preparation?: DocumentPreparation | undefined;
  chunking: ChunkOptions;
  embedBatchSize: number;
  /** Documents read, converted and embedded at once. */
  concurrency: number;
  /** Points (upserted plus deleted) written to the store in one batch; default 2048. */
  writeBatchPoints?: number;
  /** Delete the points of documents no longer in the source (default true). */
  prune: boolean;
  /**
   * Sync only this share of the listing (a completion of a Kubernetes Indexed Job; see shard.ts). A run
   * given one share of several never prunes: it cannot tell a deleted document from another share's.
   */
  shard?: Shard | undefined;
  /** List the whole source and prune what it lost (with the guard), syncing nothing: the last step after every shard. */
  pruneOnly?: boolean | undefined;
  /**
   * Share of the indexed documents (0 to 1, default 0.5) a run may prune: past it, or when the listing
   * is empty, nothing is pruned and the summary says why (`pruneRefused`). INGEST_MAX_PRUNE_RATIO.
   */
  maxPruneRatio?: number;
  /** Prune past `maxPruneRatio` and on an empty listing (--force-prune). */
  forcePrune?: boolean;
  /**
   * Make public the documents the index holds as restricted when the folder has no access file any
   * more (--allow-publish); otherwise they are left as they are and listed in `keptRestricted`.
   */
  allowPublish?: boolean;
  /** Larger documents fail with RAG_DOCUMENT_TOO_LARGE, unread when the listing gives their size (default 50 MB). INGEST_MAX_FILE_BYTES. */
  maxFileBytes?: number;
  /** CONTEXT_MODE lead or llm: each chunk's context, stored with it and prepended to what is embedded and encoded. */
  contexts?: ChunkContexts | undefined;
  /** List each document with its chunk count; write nothing. */
  dryRun: boolean;
  logger: Logger;
  onDocument?: (uri: string, summary: IngestSummary) => void;
  /** In a dry run, each document with the number of chunks it would have. */
  onPlanned?: (uri: string, chunks: number) => void;
  /** In a dry run, each document pruning would delete, with its points (refused or not). */
  onPlannedPrune?: (uri: string, points: number) => void;
  /**
   * Stops the run (SIGTERM): no document is started any more, those being read, converted or embedded
   * are abandoned (nothing of them is written), writes already queued finish, and nothing is pruned.
   * The summary then comes back with `interrupted` set.
   */
  signal?: AbortSignal;
}

/**
 * Each batch is one LanceDB commit (a table version and a fragment): at 512 points a 98.6k-chunk first run
 * made 194 versions, every one of which a server's version check lists until compaction prunes them;
 * 2048 made 52 and ran 12 % faster, with no higher peak memory. Qdrant gets it as requests of 64 points.
 */
const DEFAULT_WRITE_BATCH_POINTS = 2048;
const IN_PROCESS = new InProcessPreparation();
const DEFAULT_MAX_PRUNE_RATIO = 0.5;
const DEFAULT_MAX_FILE_BYTES = 50_000_000;
/**
 * Documents listed ahead of those being processed, per unit of concurrency: the listing is read only
 * as fast as documents are synced, so memory holds a window of documents, not the whole listing.
 */
const LISTED_AHEAD_PER_WORKER = 2;

interface Run {
  options: IngestOptions;
  summary: IngestSummary;
  writer: IngestWriter;
}

/**
 * Brings the store in sync with the source. Unchanged documents cost nothing; a changed one has its
 * new chunks upserted before its stale ones are deleted, and deleted documents are pruned only after
 * every upsert, so a run interrupted anywhere leaves every previously indexed document searchable,
 * and the next run finds and re-syncs any document a killed run left half written.
 */
export async function ingest(options: IngestOptions): Promise<IngestSummary> {
  return inSpan('ingest', { attributes: { 'db.system.name': options.store.name } }, async (span) => {
    const summary = await syncAll(options);
    span.setAttributes({
      'rag.ingest.files': summary.files,
      'rag.ingest.chunks': summary.chunks,
      'rag.ingest.upserts': summary.upserts,
      'rag.ingest.deletes': summary.deletes,
      'rag.ingest.errors': summary.errors,
      'rag.ingest.interrupted': summary.interrupted,
    });
    return summary;
  });
}

async function syncAll(options: IngestOptions): Promise<IngestSummary> {
  const run: Run = { options, summary: new IngestSummary(options.shard), writer: new IngestWriter(options.store, options.writeBatchPoints ?? DEFAULT_WRITE_BATCH_POINTS) };
  const indexed = new Map((await inSpan('list indexed documents', {}, () => options.store.listDocuments())).map((document) => [document.source, asIndexed(document)]));
  // The uris listed are all the run keeps of the listing: pruning needs them.
  const seen = new Set<string>();
  const limit = pLimit(options.concurrency);
  const preparing = new Set<Promise<void>>();
  const writing = new Set<Promise<void>>();
  try {
    // The listing's calls (GCS pages) are children of one span lasting as long as the listing.
    for await (const document of inStreamSpan(suiteTracer().startSpan('list source'), () => options.source.list(options.signal))) {
      if (options.signal?.aborted) break;
      if (options.shard && !inShard(document.uri, options.shard)) {
        run.summary.otherShards += 1;
        continue;
      }
      run.summary.files += 1;
      seen.add(document.uri);
      reportIgnoredMetaKeys(document, run);
      if (options.pruneOnly) continue;
      track(preparing, limit(() => syncDocumentSafely(document, indexed.get(document.uri), run, writing)));
      while (preparing.size >= options.concurrency * LISTED_AHEAD_PER_WORKER) await Promise.race(preparing);
    }
    countSkippedEntries(run);
  } catch (error) {
    // A listing stopped by the signal is an interruption, not a source failure.
    if (!options.signal?.aborted) throw error;
  } finally {
    // Even when the listing fails, documents in flight are written before the caller closes the
    // store; the error then propagates and nothing is pruned: a partial listing says nothing of deletions.
    await Promise.all(preparing);
    await run.writer.flush();
    await Promise.all(writing);
  }
  if (options.signal?.aborted) return interrupted(run);
  if (prunes(options)) {
    await inSpan('prune', {}, () => pruneDeleted(indexed, seen, run.summary, {
      store: options.store,
      logger: options.logger,
      dryRun: options.dryRun,
      maxPruneRatio: options.maxPruneRatio ?? DEFAULT_MAX_PRUNE_RATIO,
      forcePrune: options.forcePrune ?? false,
      onPlannedPrune: options.onPlannedPrune,
      forget: options.contexts?.forget?.bind(options.contexts),
      signal: options.signal,
    }));
  }
  return options.signal?.aborted ? interrupted(run) : run.summary;
}

/** Pruning needs the whole listing: a run given one share of several leaves it to a --prune-only run. */
function prunes(options: IngestOptions): boolean {
  return (options.prune || options.pruneOnly === true) && (options.shard === undefined || options.shard.count === 1);
}

/** Entries the listing passed over (symbolic links) count as skipped, each logged with its reason (by its own shard only). */
function countSkippedEntries({ options, summary }: Run): void {
  for (const entry of options.source.skippedEntries ?? []) {
    if (options.shard && !inShard(entry.uri, options.shard)) continue;
    summary.skippedEntries += 1;
    options.logger.info({ uri: entry.uri, reason: entry.reason }, 'skipped');
  }
}

/** A document's custom metadata keys its source left out: a warning and a line of the job's report, never a failure. */
function reportIgnoredMetaKeys(document: SourceDocument, { options, summary }: Run): void {
  if (!document.ignoredMetaKeys?.length) return;
  summary.ignoredMetaKeys.push({ uri: document.uri, keys: document.ignoredMetaKeys });
  options.logger.warn({ uri: document.uri, keys: document.ignoredMetaKeys.slice(0, 20) }, 'custom metadata keys ignored: a key is letters, digits, _ and -, at most 100, and 32 keys a document');
}

/** Keeps a promise in `pending` until it settles, so the set holds only what is still running. */
function track(pending: Set<Promise<void>>, promise: Promise<void>): void {
  const settled: Promise<void> = promise.finally(() => pending.delete(settled));
  pending.add(settled);
}

/** A document a killed run left half written (see IngestWriter) has no version: the run re-syncs it. */
function asIndexed(document: IndexedDocument): IndexedDocument {
  return isWhole(document) ? document : { ...document, contentHash: '', sourceVersion: undefined };
}

/**
 * Stopped before the listing was through, nothing is pruned: a document the run did not reach is not a
 * deleted one. Stopped while pruning, the rest of the deleted documents are pruned by the next run.
 */
function interrupted({ options, summary }: Run): IngestSummary {
  summary.interrupted = true;
  options.logger.warn({ files: summary.files, abandoned: summary.abandoned, upserts: summary.upserts, deletes: summary.deletes }, 'ingest interrupted: queued writes finished; the next run completes the sync');
  return summary;
}

async function syncDocumentSafely(document: SourceDocument, previous: IndexedDocument | undefined, run: Run, writing: Set<Promise<void>>): Promise<void> {
  if (run.options.signal?.aborted) {
    run.summary.abandoned += 1;
    return;
  }
  try {
    const write = await inSpan('sync document', { attributes: { 'rag.document.type': extname(document.uri).toLowerCase() } }, () => syncDocument(document, previous, run));
    if (write) {
      track(
        writing,
        write.done.then(
          () => done(document, run),
          (error: unknown) => failed(document, error, run),
        ),
      );
      return;
    }
  } catch (error) {
    // Stopped while being read, converted or embedded: nothing of it was written, the next run does it.
    if (run.options.signal?.aborted) run.summary.abandoned += 1;
    else failed(document, error, run);
    return;
  }
  done(document, run);
}

function done(document: SourceDocument, run: Run): void {
  run.options.onDocument?.(document.uri, run.summary);
}

function failed(document: SourceDocument, error: unknown, run: Run): void {
  const reason = error instanceof Error ? error.message : String(error);
  const code = isRagError(error) ? error.code : 'RAG_INTERNAL';
  run.summary.failures.push({ uri: document.uri, reason, code });
  run.options.logger.error({ uri: document.uri, reason, code }, 'document failed');
  run.options.onDocument?.(document.uri, run.summary);
}

/** Reads, converts, chunks and embeds a changed document and queues its write; nothing for an unchanged one. */
async function syncDocument(document: SourceDocument, previous: IndexedDocument | undefined, run: Run): Promise<WriteCompletion | undefined> {
  const { options, summary } = run;
  const converter = options.converters.forDocument(document.uri);
  if (!converter) {
    summary.unsupported += 1;
    options.logger.debug({ uri: document.uri }, 'unsupported extension, skipped');
    return undefined;
  }
  if (wouldPublish(document, previous) && !options.allowPublish) {
    summary.keptRestricted.push(document.uri);
    options.logger.warn({ uri: document.uri, groups: previous?.groups }, `kept restricted: the folder has no access file, and this document is indexed with access groups (RAG_ACCESS_WOULD_PUBLISH)`);
    return undefined;
  }
  const checkChanges = previous !== undefined && !options.dryRun && !lacksPages(converter, document, previous, run);
  if (checkChanges && document.sourceVersion !== undefined && previous.sourceVersion === document.sourceVersion) {
    return keepContent(document, previous, run);
  }
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  // Refused unread when the listing gives the size; a source that does not is checked once read.
  assertWithinSize(document.size, maxFileBytes);
  const bytes = await document.read(options.signal);
  assertWithinSize(bytes.length, maxFileBytes);
  const contentHash = contentHashOf(bytes);
  if (checkChanges && previous.contentHash === contentHash) return keepContent(document, previous, run);
  const preparation = options.preparation ?? IN_PROCESS;
  options.logger.debug({ uri: document.uri, bytes: bytes.length }, 'converting');
  const { markdown, chunks, linkList } = await inSpan('convert', { attributes: { 'rag.document.bytes': bytes.length } }, () =>
    preparation.prepare({ converter, bytes, uri: document.uri, chunking: options.chunking, signal: options.signal }),
  );
  options.signal?.throwIfAborted();
  if (linkList) countLinkList(document.uri, linkList, run);
  summary.chunks += chunks.length;
  if (options.dryRun) {
    options.logger.info({ uri: document.uri, chunks: chunks.length }, 'dry run');
    options.onPlanned?.(document.uri, chunks.length);
    return undefined;
  }
  const contexts = options.contexts ? await contextsOf(options.contexts, { uri: document.uri, markdown, contentHash, groups: document.groups }, chunks, run) : undefined;
  // A chunk left without its context (gateway failure, token budget) is written with no document version,
  // so the next run syncs the document again: the cache answers its other chunks.
  const complete = contexts === undefined || contexts.failed + contexts.deferred === 0;
  const version = complete ? { contentHash, sourceVersion: document.sourceVersion, groups: document.groups } : { contentHash: '', sourceVersion: undefined, groups: document.groups };
  // The title comes from the content, so it is known only here (and kept by a later metadata-only rewrite).
  const withMetadata = { ...version, metadata: document.metadata && { ...document.metadata, title: documentTitle(document.uri, markdown, bytes) } };
  const onEmbedCall = () => (summary.embedCalls += 1);
  const vectorized = await vectorizeChunks(chunks, withMetadata, options.embedder, options.embedBatchSize, onEmbedCall, options.signal, contexts?.contexts, options.store.bm25Language).catch((error: unknown) => {
    // The chunks of a document abandoned by a stopped run are not part of what the run did.
    if (options.signal?.aborted) summary.chunks -= chunks.length;
    throw error;
  });
  const currentIds = new Set(vectorized.map((chunk) => chunk.id));
  const staleIds = (previous?.chunkIds ?? []).filter((id) => !currentIds.has(id));
  const write = await run.writer.enqueue(vectorized, staleIds);
  return {
    done: write.done.then(() => {
      summary.upserts += vectorized.length;
      summary.deletes += staleIds.length;
    }),
  };
}

/** A table of contents or an index (see converters/html/link-list-pages.ts): counted, and said once per page. */
function countLinkList(uri: string, linkList: { links: number; indexedLightly: boolean }, { options, summary }: Run): void {
  summary.linkLists.pages += 1;
  if (linkList.indexedLightly) summary.linkLists.withoutLinks += 1;
  const how = linkList.indexedLightly ? 'indexed without its links (INGEST_LINK_PAGES=full keeps them)' : 'indexed with its links';
  options.logger.info({ uri, links: linkList.links }, `link list: ${how}`);
}

async function contextsOf(writer: ChunkContexts, document: ContextDocument, chunks: Chunk[], { options, summary }: Run): Promise<DocumentContexts> {
  const contexts = await writer.contextsFor(document, chunks, options.signal).catch((error: unknown) => {
    if (options.signal?.aborted) summary.chunks -= chunks.length;
    throw error;
  });
  for (const key of ['written', 'cached', 'failed', 'deferred', 'promptTokens', 'completionTokens'] as const) summary.contexts[key] += contexts[key];
  return contexts;
}

/**
 * A document whose content did not change is skipped, unless its access groups did (an edited
 * .rag-access.yaml, new `rag-groups` metadata): then only its points' groups are rewritten, with no read,
 * conversion or embedding. Its points count in the summary's upserts, as points written.
 */
async function keepContent(document: SourceDocument, previous: IndexedDocument, run: Run): Promise<WriteCompletion | undefined> {
  const metadataWrite = metadataChanged(document, previous, run.options.store) ? await rewriteMetadata(document, previous, run) : undefined;
  const groupsWrite = await keepContentGroups(document, previous, run, metadataWrite !== undefined);
  return metadataWrite && groupsWrite ? { done: Promise.all([metadataWrite.done, groupsWrite.done]).then(() => {}) } : (metadataWrite ?? groupsWrite);
}

/** Whether the listing's metadata differs from what the chunks carry (unknown counts as different), and the store can rewrite it. */
function metadataChanged(document: SourceDocument, previous: IndexedDocument, store: VectorStore): boolean {
  return document.metadata !== undefined && store.setMetadata !== undefined && !sameMetadata(previous.metadata, document.metadata);
}

/** A change of metadata alone (custom fields, a touched file) rewrites the chunks' payload: nothing is re-embedded. */
async function rewriteMetadata(document: SourceDocument, previous: IndexedDocument, { options, summary, writer }: Run): Promise<WriteCompletion> {
  options.logger.info({ uri: document.uri, points: previous.chunkIds.length }, 'metadata changed: rewriting it, nothing re-embedded');
  const write = await writer.enqueueMetadata(document.uri, { ...document.metadata!, title: previous.metadata?.title }, previous.chunkIds.length);
  return { done: write.done.then(() => void (summary.upserts += previous.chunkIds.length)) };
}

async function keepContentGroups(document: SourceDocument, previous: IndexedDocument, { options, summary, writer }: Run, metadataRewritten: boolean): Promise<WriteCompletion | undefined> {
  if (sameGroups(previous.groups, document.groups)) {
    if (!metadataRewritten) summary.unchanged += 1;
    return undefined;
  }
  options.logger.info({ uri: document.uri, groups: document.groups, points: previous.chunkIds.length }, 'access groups changed: rewriting them, nothing re-embedded');
  const write = await writer.enqueueGroups(document.uri, document.groups, previous.chunkIds.length);
  return {
    done: write.done.then(() => {
      summary.upserts += previous.chunkIds.length;
      summary.groupUpdates += 1;
    }),
  };
}

/**
 * A document of a paged type (PDF, PPTX) indexed before chunks recorded their pages: it is converted and
 * chunked again even though it did not change, once; documents of other types are not touched.
 */
function lacksPages(converter: Converter, document: SourceDocument, previous: IndexedDocument, { options }: Run): boolean {
  if (previous.pagesRecorded !== false || !pagesDocuments(converter, extensionOf(document.uri))) return false;
  options.logger.info({ uri: document.uri }, 'indexed before pages were recorded: converting it again for its page numbers');
  return true;
}

/** A restricted document that the run would index as public only because the folder lost its access file. */
function wouldPublish(document: SourceDocument, previous: IndexedDocument | undefined): boolean {
  // Groups undefined: a groups update cut short left some of its points restricted.
  return document.accessFileMissing === true && document.groups.length === 0 && previous !== undefined && (previous.groups === undefined || previous.groups.length > 0);
}

function assertWithinSize(bytes: number | undefined, maxFileBytes: number): void {
  if (bytes !== undefined && bytes > maxFileBytes) {
    throw new RagError('RAG_DOCUMENT_TOO_LARGE', `(${bytes.toLocaleString('en-US')} bytes, the limit is ${maxFileBytes.toLocaleString('en-US')})`);
  }
}
