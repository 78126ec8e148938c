import pLimit from 'p-limit';
import { chunkMarkdown } from '../chunking/chunk-markdown.ts';
import type { ConverterRegistry } from '../converters/converter-registry.ts';
import type { IndexedDocument } from '../domain.ts';
import type { Embedder } from '../embedders/embedder.ts';
import { RagError } from '../errors.ts';
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
  for await (const document of options.source.list(options.signal)) {
    summary.files += 1;
    seen.add(document.uri);
    pending.push(limit(() => syncDocumentSafely(document, indexed.get(document.uri), options, summary)));
  }
  await Promise.all(pending);
  if (options.prune && !options.dryRun) await pruneDeleted(indexed, seen, options, summary);
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
    summary.failures.push({ uri: document.uri, reason });
    options.logger.error({ uri: document.uri, reason, code: (error as RagError).code }, 'document failed');
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

async function pruneDeleted(
  indexed: Map<string, IndexedDocument>,
  seen: Set<string>,
  options: IngestOptions,
  summary: IngestSummary,
): Promise<void> {
  for (const [source, document] of indexed) {
    if (seen.has(source)) continue;
    await options.store.deleteByIds(document.chunkIds);
    summary.deletes += document.chunkIds.length;
    options.logger.info({ uri: source, chunks: document.chunkIds.length }, 'pruned deleted document');
  }
}
