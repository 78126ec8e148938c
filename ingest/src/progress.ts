import { SingleBar } from 'cli-progress';
import type { IngestSummary, Logger } from '@rag/core';

const LOG_EVERY_MS = 5000;

export interface Progress {
  update(uri: string, summary: IngestSummary): void;
  stop(): void;
}

/** A progress bar when a person watches a terminal; periodic JSON log lines when a CronJob's logs do. */
export function startProgress(logger: Logger, stream: NodeJS.WriteStream | undefined): Progress {
  return stream?.isTTY ? progressBar(stream) : progressLog(logger);
}

function progressBar(stream: NodeJS.WriteStream): Progress {
  const bar = new SingleBar({
    stream,
    format: 'ingest [{bar}] {value}/{total} documents | {chunks} chunks, {skipped} skipped, {errors} errors',
    hideCursor: true,
    clearOnComplete: false,
  });
  let done = 0;
  let stopped = false;
  bar.start(0, 0, { chunks: 0, skipped: 0, errors: 0 });
  return {
    update(_uri, summary) {
      done += 1;
      // The total grows while the source is still being listed.
      bar.setTotal(summary.files);
      bar.update(done, { chunks: summary.chunks, skipped: summary.skipped, errors: summary.errors });
    },
    stop() {
      if (!stopped) bar.stop();
      stopped = true;
    },
  };
}

function progressLog(logger: Logger): Progress {
  let lastLog = performance.now();
  let done = 0;
  return {
    update(_uri, summary) {
      done += 1;
      const now = performance.now();
      if (now - lastLog < LOG_EVERY_MS) return;
      lastLog = now;
      logger.info({ done, listed: summary.files, chunks: summary.chunks, upserts: summary.upserts, skipped: summary.skipped, errors: summary.errors }, 'ingest progress');
    },
    stop() {},
  };
}
