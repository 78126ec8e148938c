import type { IngestSummary, Logger } from '@rag/core';

const LOG_EVERY_MS = 5000;

/** Periodic progress log lines, so long runs show they are alive. */
export function progressReporter(logger: Logger): (uri: string, summary: IngestSummary) => void {
  let lastLog = performance.now();
  let done = 0;
  return (_uri, summary) => {
    done += 1;
    const now = performance.now();
    if (now - lastLog < LOG_EVERY_MS) return;
    lastLog = now;
    logger.info({ done, chunks: summary.chunks, upserts: summary.upserts, errors: summary.errors }, 'ingest progress');
  };
}
