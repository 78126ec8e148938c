import { inBatches } from '../batches.ts';
import type { IndexedDocument } from '../domain.ts';
import type { Logger } from '../logger.ts';
import type { VectorStore } from '../stores/vector-store.ts';
import { DOCUMENT_FAULTS } from './document-faults.ts';
import type { IngestSummary, PruneRefusal } from './ingest-summary.ts';

export interface PruneOptions {
  store: VectorStore;
  logger: Logger;
  dryRun: boolean;
  /** Share of the indexed documents (0 to 1) a run may delete; past it, or with an empty listing, nothing is pruned. */
  maxPruneRatio: number;
  /** Prune whatever the listing says, past the ratio and on an empty listing (--force-prune). */
  forcePrune: boolean;
  /** A dry run: each document pruning would remove, with its points. */
  onPlannedPrune?: ((uri: string, points: number) => void) | undefined;
  /** What else keeps something of a document (the context cache) forgets the documents pruned. */
  forget?: ((sources: readonly string[]) => Promise<void>) | undefined;
  signal?: AbortSignal | undefined;
}

/** Ids per delete call when pruning, to keep each request (an `id IN (…)` filter in LanceDB) small. */
const PRUNE_BATCH = 1000;
/** Documents named in a refusal, as examples of what the listing lost. */
const EXAMPLES = 3;

/**
 * Deletes the points of documents the source no longer lists, once every other document was
 * written. Two things stop it:
 *
 * - the guard: an empty listing, or one that would delete more than `maxPruneRatio` of the indexed
 *   documents, is what a mistyped folder, bucket or prefix looks like, and pruning it would empty a
 *   production collection. The run then deletes nothing and says so (RAG_PRUNE_REFUSED);
 * - a failed write (store, embedder, source): the failed document may be the new name of a deleted
 *   one, whose points are then the only copy. A document that fails on its own (DOCUMENT_FAULTS)
 *   does not block it: it keeps its own points, and a scanned PDF must not stop a bucket from ever
 *   being pruned.
 */
export async function pruneDeleted(indexed: ReadonlyMap<string, IndexedDocument>, seen: ReadonlySet<string>, summary: IngestSummary, options: PruneOptions): Promise<void> {
  const deleted = [...indexed.values()].filter((document) => !seen.has(document.source)).sort((a, b) => a.source.localeCompare(b.source));
  if (deleted.length === 0) return;
  // A dry run shows what pruning would delete, refused or not.
  if (options.dryRun) for (const document of deleted) logPrune(document, options);
  const refusal = options.forcePrune ? undefined : refusalOf(deleted, indexed.size, summary.files, options.maxPruneRatio);
  if (refusal) {
    summary.pruneRefused = refusal;
    options.logger.warn({ deletedDocuments: refusal.deletedDocuments, indexedDocuments: refusal.indexedDocuments }, `prune refused: ${refusal.reason}`);
    return;
  }
  const writeFailures = summary.failures.filter((failure) => !DOCUMENT_FAULTS.has(failure.code)).length;
  if (writeFailures > 0) {
    options.logger.warn({ deletedDocuments: deleted.length, writeFailures }, 'prune skipped because documents failed to be written; the next clean run prunes');
    return;
  }
  if (options.dryRun) return;
  for (const document of deleted) logPrune(document, options);
  const ids = deleted.flatMap((document) => document.chunkIds);
  for (const batch of inBatches(ids, PRUNE_BATCH)) {
    if (options.signal?.aborted) return;
    await options.store.deleteByIds(batch);
    summary.deletes += batch.length;
  }
  await options.forget?.(deleted.map((document) => document.source));
}

function logPrune(document: IndexedDocument, options: PruneOptions): void {
  options.logger.info({ uri: document.source, chunks: document.chunkIds.length }, options.dryRun ? 'dry run: would prune deleted document' : 'pruning deleted document');
  if (options.dryRun) options.onPlannedPrune?.(document.source, document.chunkIds.length);
}

function refusalOf(deleted: IndexedDocument[], indexedDocuments: number, listedFiles: number, maxRatio: number): PruneRefusal | undefined {
  const share = deleted.length / indexedDocuments;
  const examples = `e.g. ${deleted
    .slice(0, EXAMPLES)
    .map((document) => document.source)
    .join(', ')}${deleted.length > EXAMPLES ? ', …' : ''}`;
  const counts = `this run would delete ${deleted.length} of ${indexedDocuments} indexed documents`;
  if (listedFiles === 0) {
    return { deletedDocuments: deleted.length, indexedDocuments, reason: `the source listed no document, and ${counts} (${examples})` };
  }
  if (share <= maxRatio) return undefined;
  const limit = Number((maxRatio * 100).toFixed(1));
  const rounded = Number((share * 100).toFixed(1));
  // A share just past the limit keeps its digits rather than read as equal to it.
  const percent = rounded > limit ? rounded : share * 100;
  return { deletedDocuments: deleted.length, indexedDocuments, reason: `${counts} (${percent} % > INGEST_MAX_PRUNE_RATIO ${limit} %; ${examples})` };
}
