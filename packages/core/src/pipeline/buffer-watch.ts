/**
 * What a conversion worker holds outside V8's heap. `resourceLimits.maxOldGenerationSizeMb` bounds the old
 * generation only: ArrayBuffers (pdf.js's decoded streams, a document's bytes, zip entries) live outside it, so
 * a PDF of 2 MB whose FlateDecode stream inflates to 1.8 GB grew a worker past 4 GB while its 1,024 MiB heap
 * limit never fired (issue 43, finding 3). The worker samples its own `process.memoryUsage().external` (the
 * memory V8 objects hold outside the heap, ArrayBuffers included; in a worker thread it is the thread's own)
 * while it prepares a document, and stops itself once past the budget (INGEST_CONVERT_BUFFERS_MB).
 */
import workerpool from 'workerpool';

/** What a worker past its budget reports (workerpool's workerEmit) before it stops itself. */
export interface BuffersExceeded {
  buffersExceeded: { heldMb: number; budgetMb: number };
}

/** A worker stopped for its buffers exits with this code (EX_SOFTWARE + 10: nothing else in the job uses it). */
export const BUFFERS_EXCEEDED_EXIT_CODE = 80;

/**
 * How often the worker looks: pdf.js inflated a stream at about 200 MiB/s in the probe, so a document overshoots
 * its budget by some 10 MiB before the worker sees it. A conversion that never yields (one synchronous call)
 * delays the sample to its end: the heap limit and INGEST_CONVERT_TIMEOUT_MS still hold it.
 */
export const BUFFER_SAMPLE_MS = 50;

const MIB = 1024 * 1024;

/**
 * Samples this thread's memory outside the heap every `intervalMs` until the returned function is called; the
 * first sample past `budgetMb` is handed to `exceeded` (once). The timer is unref'd: it keeps no thread alive.
 */
export function watchBuffers(budgetMb: number, exceeded: (report: BuffersExceeded) => void, intervalMs = BUFFER_SAMPLE_MS, held: () => number = heldOutsideHeap): () => void {
  const budget = budgetMb * MIB;
  const timer = setInterval(() => {
    const bytes = held();
    if (bytes <= budget) return;
    clearInterval(timer);
    exceeded({ buffersExceeded: { heldMb: Math.round(bytes / MIB), budgetMb } });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * In a conversion worker, while it prepares a document: past `budgetMb` outside its heap, the worker says so to
 * the pool (workerpool's workerEmit, for the task in progress) and ends its thread at once. The conversion cannot be
 * interrupted otherwise, and every buffer it holds goes with the thread; the pool reports the document
 * RAG_DOCUMENT_TOO_COMPLEX and starts a new worker. Returns the function that stops the watch.
 */
export function stopPastBuffers(budgetMb: number): () => void {
  return watchBuffers(budgetMb, (report) => {
    workerpool.workerEmit(report);
    process.exit(BUFFERS_EXCEEDED_EXIT_CODE);
  });
}

/** ArrayBuffers and the other memory V8 objects hold outside the heap (`external` includes `arrayBuffers`). */
function heldOutsideHeap(): number {
  const { external, arrayBuffers } = process.memoryUsage();
  return Math.max(external, arrayBuffers);
}

export function isBuffersExceeded(event: unknown): event is BuffersExceeded {
  const report = (event as Partial<BuffersExceeded> | undefined)?.buffersExceeded;
  return typeof report?.heldMb === 'number' && typeof report.budgetMb === 'number';
}
