import pLimit from 'p-limit';
import { chunkMarkdown } from '../chunking/chunk-markdown.ts';
import type { ConverterRegistry } from '../converters/converter-registry.ts';
import type { IndexedDocument } from '../domain.ts';
import type { Embedder } from '../embedders/embedder.ts';
import { isRagError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { DocumentSource, SourceDocument } from '../sources/document-source.ts';
import type { VectorStore } from '../stores/vector-store.ts';
import { contentHashOf, vectorizeChunks, type ChunkOptions } from './index-document.ts';
import { IngestSummary } from './ingest-summary.ts';

export interface IngestOptions {
  source: DocumentSource;
  store: VectorStore;
  embedder?: Embedder | undefined;
  converters: ConverterRegistry;
  chunking: ChunkOptions;
  embedBatchSize: number;
  concurrency: number;
  /** Delete the points of documents no longer in the source (default true). */
  prune: boolean;
  /** List each document with its chunk count; write nothing. */
  dryRun: boolean;
  logger: Logger;
  onDocument?: (uri: string, summary: IngestSummary) => void;
  /** In a dry run, each document with the number of chunks it would have. */
  onPlanned?: (uri: string, chunks: number) => void;
  signal?: AbortSignal;
}

/**
 * Brings the store in sync with the source. Unchanged documents cost nothing; a changed one has its
 * new chunks upserted before its stale ones are deleted, and deleted documents are pruned only after
 * every upsert, so a run interrupted anywhere leaves every previously indexed document searchable.
 */
export async function ingest(options: IngestOptions): Promise<IngestSummary> {
  const summary = new IngestSummary();
  const indexed = new Map((await options.store.listDocuments()).map((document) => [document.source, document]));
  const seen = new Set<string>();
  const limit = pLimit(options.concurrency);
  const pending: Promise<void>[] = [];
  try {
    for await (const document of options.source.list(options.signal)) {
      summary.files += 1;
      seen.add(document.uri);
      pending.push(limit(() => syncDocumentSafely(document, indexed.get(document.uri), options, summary)));
    }
  } finally {
    // Even when the listing fails, documents in flight finish before the caller closes the store;
    // the error then propagates and nothing is pruned: an incomplete listing says nothing of deletions.
    await Promise.all(pending);
  }
  if (options.prune) await pruneDeleted(indexed, seen, options, summary);
  return summary;
}

async function syncDocumentSafely(
  document: SourceDocument,
  previous: IndexedDocument | undefined,
  options: IngestOptions,
  summary: IngestSummary,
): Promise<void> {
  try {
    await syncDocument(document, previous, options, summary);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const code = isRagError(error) ? error.code : 'RAG_INTERNAL';
    summary.failures.push({ uri: document.uri, reason, code });
    options.logger.error({ uri: document.uri, reason, code }, 'document failed');
  } finally {
    options.onDocument?.(document.uri, summary);
  }
}

async function syncDocument(
  document: SourceDocument,
  previous: IndexedDocument | undefined,
  options: IngestOptions,
  summary: IngestSummary,
): Promise<void> {
  const converter = options.converters.forDocument(document.uri);
  if (!converter) {
    summary.unsupported += 1;
    options.logger.debug({ uri: document.uri }, 'unsupported extension, skipped');
    return;
  }
  const checkChanges = previous !== undefined && !options.dryRun;
  if (checkChanges && document.sourceVersion !== undefined && previous.sourceVersion === document.sourceVersion) {
    summary.unchanged += 1;
    return;
  }
  const bytes = await document.read(options.signal);
  const contentHash = contentHashOf(bytes);
  if (checkChanges && previous.contentHash === contentHash) {
    summary.unchanged += 1;
    return;
  }
  const markdown = await converter.toMarkdown(bytes, document.uri, options.signal);
  const chunks = chunkMarkdown(markdown, document.uri, options.chunking);
  summary.chunks += chunks.length;
  if (options.dryRun) {
    options.logger.info({ uri: document.uri, chunks: chunks.length }, 'dry run');
    options.onPlanned?.(document.uri, chunks.length);
    return;
  }
  const version = { contentHash, sourceVersion: document.sourceVersion };
  const onEmbedCall = () => (summary.embedCalls += 1);
  const vectorized = await vectorizeChunks(chunks, version, options.embedder, options.embedBatchSize, onEmbedCall, options.signal);
  await options.store.upsert(vectorized);
  summary.upserts += vectorized.length;
  const currentIds = new Set(vectorized.map((chunk) => chunk.id));
  const staleIds = (previous?.chunkIds ?? []).filter((id) => !currentIds.has(id));
  await options.store.deleteByIds(staleIds);
  summary.deletes += staleIds.length;
}

/**
 * Deletes the points of documents the source no longer lists, once every other document was
 * written. A failed write (store, embedder, source) blocks pruning: the failed document may be the
 * new name of a deleted one, whose points are then the only copy. An unreadable document does not:
 * it keeps its own points, and a scanned PDF must not stop a bucket from ever being pruned.
 */
async function pruneDeleted(
  indexed: Map<string, IndexedDocument>,
  seen: Set<string>,
  options: IngestOptions,
  summary: IngestSummary,
): Promise<void> {
  const deleted = [...indexed.values()].filter((document) => !seen.has(document.source));
  if (deleted.length === 0) return;
  const writeFailures = summary.failures.filter((failure) => failure.code !== 'RAG_DOCUMENT_UNREADABLE').length;
  if (writeFailures > 0) {
    options.logger.warn({ deletedDocuments: deleted.length, writeFailures }, 'prune skipped because documents failed to be written; the next clean run prunes');
    return;
  }
  for (const document of deleted) {
    if (options.dryRun) {
      options.logger.info({ uri: document.source, chunks: document.chunkIds.length }, 'dry run: would prune deleted document');
      continue;
    }
    await options.store.deleteByIds(document.chunkIds);
    summary.deletes += document.chunkIds.length;
    options.logger.info({ uri: document.source, chunks: document.chunkIds.length }, 'pruned deleted document');
  }
}
