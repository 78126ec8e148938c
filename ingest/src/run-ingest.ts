import { chunkOptionsOf, createChunkContexts, createEmbedder, createStore, ingest, NO_CONTEXT, RagError, type Config, type IngestSummary, type Logger, type Shard } from '@rag/core';
import {
  assertMemoryFits,
  containerMemoryLimit,
  createConverters,
  defaultConvertWorkers,
  type DocumentPreparation,
  embeddedConverterOptions,
  GcsSource,
  InProcessPreparation,
  jobBoundMb,
  type MemoryPlan,
  workerBoundMb,
  LocalDirectorySource,
  parseGcsUri,
  WorkerPreparation,
  type DocumentSource,
} from '@rag/core/ingestion';
import { startProgress, type Progress } from './progress.ts';

export interface RunIngestOptions {
  config: Config;
  logger: Logger;
  /** A folder path or gs://bucket/prefix; absent means the GCS bucket of the config, or the default corpus. */
  sourceArgument: string | undefined;
  defaultCorpus?: { root: string; include: string[] } | undefined;
  dryRun: boolean;
  prune: boolean;
  /** Sync only this share of the listing, and never prune (--shard, --shards / INGEST_SHARDS). */
  shard?: Shard | undefined;
  /** List the whole source and prune what it lost, syncing nothing (--prune-only). */
  pruneOnly?: boolean | undefined;
  /** Prune even an empty listing or past INGEST_MAX_PRUNE_RATIO (--force-prune). */
  forcePrune?: boolean | undefined;
  /** Make restricted documents public when the folder lost its access file (--allow-publish). */
  allowPublish?: boolean | undefined;
  /** A progress bar on this stream when it is a terminal; JSON log lines otherwise. */
  progressStream?: NodeJS.WriteStream | undefined;
  /** Dry run: each document with its chunk count. */
  onPlanned?: (uri: string, chunks: number) => void;
  /** Dry run: each document pruning would delete, with its points. */
  onPlannedPrune?: (uri: string, points: number) => void;
  /** Stops the run (SIGTERM): see `IngestOptions.signal`; the summary comes back `interrupted`. */
  signal?: AbortSignal;
  /** The cgroup files the container's memory limit is read from (default: those of this process's cgroups, cgroupMemoryLimitFiles); the tests give others. */
  cgroupMemoryFiles?: readonly string[];
}

export function chooseSource(options: Pick<RunIngestOptions, 'config' | 'sourceArgument' | 'defaultCorpus'>): DocumentSource {
  if (options.defaultCorpus) return new LocalDirectorySource(options.defaultCorpus.root, { include: options.defaultCorpus.include });
  if (options.sourceArgument) {
    const bucket = parseGcsUri(options.sourceArgument);
    if (bucket) return new GcsSource(bucket);
    if (options.sourceArgument.startsWith('gs://')) throw new RagError('RAG_SOURCE_UNAVAILABLE', `"${options.sourceArgument}" names no bucket: use gs://bucket/prefix.`);
    return new LocalDirectorySource(options.sourceArgument);
  }
  if (options.config.GCS_BUCKET) return new GcsSource({ bucket: options.config.GCS_BUCKET, prefix: options.config.GCS_PREFIX });
  throw new RagError('RAG_SOURCE_UNAVAILABLE', 'Give a folder or bucket to ingest (pnpm ingest ./docs, pnpm ingest gs://bucket/prefix), or set GCS_BUCKET.');
}

/** The ingest job's wiring: config → source, converters, embedder, store → sync → summary. */
export async function runIngest(options: RunIngestOptions): Promise<IngestSummary> {
  const { config, logger } = options;
  const memory = memoryPlan(config, options.pruneOnly === true);
  const limit = containerMemoryLimit(options.cgroupMemoryFiles);
  assertMemoryFits(memory, limit);
  const source = chooseSource(options);
  const embedder = await createEmbedder(config, logger);
  const contexts = await createChunkContexts(config, logger);
  const store = await createStore(config);
  const preparation = createPreparation(config, memory.workers);
  let progress: Progress | undefined;
  let endWriting: (() => Promise<void>) | undefined;
  try {
    await store.open(embedder ? await embedder.describe() : null, { create: !options.dryRun, context: contexts?.lock ?? NO_CONTEXT });
    if (!options.dryRun) endWriting = await store.markWriting?.();
    const started = performance.now();
    logger.info({ source: source.description, store: store.name, collection: config.collection, dryRun: options.dryRun, shard: options.shard, pruneOnly: options.pruneOnly }, 'ingest started');
    logger.info({ ...memory, workerBoundMb: workerBoundMb(memory), jobBoundMb: jobBoundMb(memory), containerLimitMb: limit?.mb ?? null }, 'memory budget');
    progress = startProgress(logger, options.progressStream);
    const summary = await ingest({
      source,
      store,
      embedder,
      contexts,
      converters: createConverters(config),
      preparation,
      chunking: chunkOptionsOf(config),
      embedBatchSize: config.EMBED_BATCH_SIZE,
      concurrency: config.INGEST_CONCURRENCY,
      prune: options.prune,
      shard: options.shard,
      pruneOnly: options.pruneOnly,
      maxPruneRatio: config.INGEST_MAX_PRUNE_RATIO,
      forcePrune: options.forcePrune,
      allowPublish: options.allowPublish,
      maxFileBytes: config.INGEST_MAX_FILE_BYTES,
      dryRun: options.dryRun,
      logger,
      onDocument: progress.update,
      onPlanned: options.onPlanned,
      onPlannedPrune: options.onPlannedPrune,
      signal: options.signal,
    });
    // The workers' heaps are of no use to compaction and the search view, which follow: given back first.
    await preparation.close();
    progress.stop();
    logger.info(
      { seconds: (performance.now() - started) / 1000, embedCalls: summary.embedCalls, unchanged: summary.unchanged, unsupported: summary.unsupported, ...(contexts ? { contextMode: contexts.description, contexts: summary.contexts } : {}) },
      'ingest finished',
    );
    // A stopped run has little time left: the next run compacts. So does one shard of several, while the
    // others still write: the --prune-only run after them compacts.
    const wholeRun = !summary.interrupted && (options.shard === undefined || options.shard.count === 1);
    if (wholeRun && (summary.upserts + summary.deletes > 0 || options.pruneOnly) && store.compact) logger.info({ compaction: await store.compact() }, 'storage compacted');
    // After compaction, which makes a new table version; a run that wrote nothing saves only a missing or stale view.
    if (wholeRun && !options.dryRun && store.saveSearchView) await saveSearchView(store.saveSearchView.bind(store), logger);
    return summary;
  } finally {
    progress?.stop();
    await preparation.close();
    await endWriting?.();
    await store.close();
  }
}

/** The job's memory bound, from its settings (memory-budget.ts). A --prune-only run converts nothing: no workers. */
function memoryPlan(config: Config, pruneOnly: boolean): MemoryPlan {
  return {
    workers: pruneOnly ? 0 : (config.INGEST_CONVERT_WORKERS ?? defaultConvertWorkers(config.INGEST_CONCURRENCY)),
    heapMb: config.INGEST_CONVERT_MEMORY_MB,
    buffersMb: config.INGEST_CONVERT_BUFFERS_MB,
    mainMb: config.INGEST_MAIN_MEMORY_MB,
  };
}

/** Worker threads convert and chunk documents (INGEST_CONVERT_WORKERS, 0: on this thread). */
function createPreparation(config: Config, workers: number): DocumentPreparation {
  if (workers === 0) return new InProcessPreparation();
  return new WorkerPreparation({
    workers,
    timeoutMs: config.INGEST_CONVERT_TIMEOUT_MS,
    heapMb: config.INGEST_CONVERT_MEMORY_MB,
    buffersMb: config.INGEST_CONVERT_BUFFERS_MB,
    converters: embeddedConverterOptions(config),
  });
}

/** The index is complete without it: a view that cannot be saved (a full disk) is a warning, and servers scan the table instead. */
async function saveSearchView(save: () => Promise<string | undefined>, logger: Logger): Promise<void> {
  try {
    const saved = await save();
    if (saved) logger.info({ searchView: saved }, 'search view saved');
  } catch (error) {
    logger.warn({ reason: (error as Error).message }, 'search view not saved: servers will build it from the table, which is slower to start');
  }
}
