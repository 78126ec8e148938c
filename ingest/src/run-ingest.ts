import {
  ConverterRegistry,
  createEmbedder,
  createStore,
  ingest,
  LocalDirectorySource,
  MarkdownPassthrough,
  RagError,
  type Config,
  type DocumentSource,
  type IngestSummary,
  type Logger,
} from '@rag/core';
import { progressReporter } from './progress.ts';

export interface RunIngestOptions {
  config: Config;
  logger: Logger;
  /** A folder path; absent means the GCS bucket of the config, or the default corpus. */
  sourceArgument: string | undefined;
  defaultCorpus?: { root: string; include: string[] } | undefined;
  dryRun: boolean;
  prune: boolean;
}

export function chooseSource(options: RunIngestOptions): DocumentSource {
  if (options.defaultCorpus) return new LocalDirectorySource(options.defaultCorpus.root, { include: options.defaultCorpus.include });
  if (options.sourceArgument) return new LocalDirectorySource(options.sourceArgument);
  throw new RagError('RAG_SOURCE_UNAVAILABLE', 'Give a folder to ingest: pnpm ingest ./docs');
}

/** The ingest job's wiring: config → source, converters, embedder, store → sync → summary. */
export async function runIngest(options: RunIngestOptions): Promise<IngestSummary> {
  const { config, logger } = options;
  const source = chooseSource(options);
  const embedder = createEmbedder(config, logger);
  const store = createStore(config);
  await store.open(embedder ? await embedder.describe() : null);
  const started = performance.now();
  logger.info({ source: source.description, store: store.name, collection: config.collection, dryRun: options.dryRun }, 'ingest started');
  try {
    const summary = await ingest({
      source,
      store,
      embedder,
      converters: new ConverterRegistry([new MarkdownPassthrough()]),
      chunking: { chunkSize: config.CHUNK_SIZE, chunkOverlap: config.CHUNK_OVERLAP },
      embedBatchSize: config.EMBED_BATCH_SIZE,
      concurrency: config.INGEST_CONCURRENCY,
      prune: options.prune,
      dryRun: options.dryRun,
      logger,
      onDocument: progressReporter(logger),
    });
    logger.info({ seconds: (performance.now() - started) / 1000, embedCalls: summary.embedCalls, unchanged: summary.unchanged, unsupported: summary.unsupported }, 'ingest finished');
    return summary;
  } finally {
    await store.close();
  }
}
