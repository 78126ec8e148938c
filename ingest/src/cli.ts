import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger, isRagError, loadConfig, RagError, startTracing, type IngestSummary } from '@rag/core';
import { runIngest } from './run-ingest.ts';
import { shardOption } from './shard-option.ts';

const USAGE = `Usage: pnpm ingest [SOURCE] [--dry-run] [--no-prune | --force-prune] [--allow-publish]
                   [--shard INDEX/COUNT | --shards COUNT | --prune-only]

SOURCE   a folder (indexed recursively) or gs://bucket/prefix; without it, GCS_BUCKET/GCS_PREFIX
--default-corpus  the project's own README.md and docs/ (what \`pnpm start\` indexes)
--dry-run         list each document with its chunk count (-N for one it would prune); write nothing

Formats: .md .markdown .html .htm .pdf .docx .pptx (PDF/DOCX/PPTX through docling-serve when
DOCLING_URL is set); other files are skipped and counted.
--no-prune        keep the points of documents that are no longer in the source
--force-prune     prune even an empty listing, or one that loses more than INGEST_MAX_PRUNE_RATIO
                  of the indexed documents (otherwise refused: RAG_PRUNE_REFUSED, exit 1)
--allow-publish   make public the documents the index holds as restricted when the folder has no
                  .rag-access.yaml any more (otherwise kept as they are: RAG_ACCESS_WOULD_PUBLISH, exit 1)

--shard I/N       sync only share I (from 0) of N of the listing (a stable hash of each document's uri);
                  never prunes. --shards N (INGEST_SHARDS) takes I from JOB_COMPLETION_INDEX, which
                  Kubernetes sets in each pod of an Indexed Job. Prints "shard I/N: F of L listed documents"
--prune-only      list the whole source and prune what it lost (with the guard above), syncing nothing:
                  run once after every shard completed

Ends with: done: N files, M chunks, U upserts, D deletes, S skipped, E errors.
Exit status: 0 synced; 1 when E > 0, pruning was refused or restricted documents were kept; 2 when the run could not start or the
listing failed; 3 when stopped by SIGTERM or SIGINT (RAG_INGEST_INTERRUPTED; a second signal exits at once).`;

/** Stopped by a signal before the sync was through: RAG_INGEST_INTERRUPTED. */
const EXIT_INTERRUPTED = 3;

/** The repository root, where the default corpus (README.md, docs/) lives. */
const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'dry-run': { type: 'boolean', default: false },
      'no-prune': { type: 'boolean', default: false },
      'force-prune': { type: 'boolean', default: false },
      'allow-publish': { type: 'boolean', default: false },
      'default-corpus': { type: 'boolean', default: false },
      shard: { type: 'string' },
      shards: { type: 'string' },
      'prune-only': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const stop = stopOnSignals();
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT });
  const shard = shardOption(values, config);
  // One trace per run when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; exported before the process exits.
  const tracing = startTracing(config, { serviceName: 'rag-ingest' });
  const summary = await runIngest({
    config,
    logger,
    sourceArgument: values['default-corpus'] ? undefined : positionals[0],
    defaultCorpus: values['default-corpus'] ? { root: repositoryRoot, include: ['README.md', 'docs'] } : undefined,
    dryRun: values['dry-run'],
    prune: !values['no-prune'],
    shard,
    pruneOnly: values['prune-only'],
    forcePrune: values['force-prune'],
    allowPublish: values['allow-publish'],
    progressStream: process.stderr,
    onPlanned: (uri, chunks) => process.stdout.write(`${chunks}\t${uri}\n`),
    onPlannedPrune: (uri, points) => process.stdout.write(`-${points}\t${uri}\n`),
    signal: stop,
  }).finally(() => tracing.shutdown());
  for (const failure of summary.failures) process.stderr.write(`failed: ${failure.uri}: ${failure.reason}\n`);
  const shardLine = summary.shardLine();
  if (shardLine) process.stdout.write(`${shardLine}\n`);
  const ignoredMetaKeysLine = summary.ignoredMetaKeysLine();
  if (ignoredMetaKeysLine) process.stdout.write(`${ignoredMetaKeysLine}\n`);
  const linkListLine = summary.linkListLine();
  if (linkListLine) process.stdout.write(`${linkListLine}\n`);
  process.stdout.write(`${summary.toLine()}\n`);
  // Token usage per run (CONTEXT_MODE=llm): the summary line's errors include the chunks whose context failed.
  if (config.CONTEXT_MODE === 'llm') process.stdout.write(`${summary.contextLine()}\n`);
  if (summary.interrupted) {
    const left = `${summary.abandoned} of the ${summary.files} documents listed so far not synced, left for the next run`;
    const error = new RagError('RAG_INGEST_INTERRUPTED', `(${(stop.reason as Error).message}; ${left}.)`);
    process.stderr.write(`${error.code}: ${error.message}\n`);
    return EXIT_INTERRUPTED;
  }
  const refusals = refusalsOf(summary);
  for (const error of refusals) process.stderr.write(`${error.code}: ${error.message}\n`);
  return summary.errors > 0 || refusals.length > 0 ? 1 : 0;
}

/** The guards that held part of the sync back: the prune guard, and restricted documents kept so. */
function refusalsOf(summary: IngestSummary): RagError[] {
  const refusals: RagError[] = [];
  if (summary.pruneRefused) refusals.push(new RagError('RAG_PRUNE_REFUSED', `(${summary.pruneRefused.reason}.)`));
  const kept = summary.keptRestricted;
  if (kept.length > 0) {
    const examples = `${kept.slice(0, 3).join(', ')}${kept.length > 3 ? ', …' : ''}`;
    refusals.push(new RagError('RAG_ACCESS_WOULD_PUBLISH', `(${kept.length} restricted document${kept.length > 1 ? 's' : ''} kept as indexed: ${examples}.)`));
  }
  return refusals;
}

/**
 * The first SIGTERM (Kubernetes stopping the job) or SIGINT (Ctrl-C) stops the run cleanly: no new
 * document, the writes in progress finish, no pruning. A second one exits at once, as a hung run must
 * still be stoppable; whatever it cuts short is healed by the next run.
 */
function stopOnSignals(): AbortSignal {
  const controller = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (controller.signal.aborted) {
        process.stderr.write(`${signal} again: exiting now\n`);
        process.exit(128 + constants.signals[signal]);
      }
      process.stderr.write(`${signal}: finishing the writes in progress, then stopping (send it again to exit at once)\n`);
      controller.abort(new Error(`stopped by ${signal}`));
    });
  }
  return controller.signal;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${isRagError(error) ? `${error.code}: ${error.message}` : String((error as Error)?.stack ?? error)}\n`);
    process.exit(2);
  },
);
