import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import workerpool from 'workerpool';
import { convertDocument } from '../converters/converter.ts';
import type { EmbeddedConverterOptions } from '../converters/converters-from-config.ts';
import { RagError } from '../errors.ts';
import { BUFFERS_EXCEEDED_EXIT_CODE, type BuffersExceeded, isBuffersExceeded } from './buffer-watch.ts';
import { asDocumentFault } from './document-faults.ts';
import type { DocumentPreparation, PreparationRequest, PreparedDocument } from './document-preparation.ts';
import type { PreparationOutcome, PreparationTask } from './document-preparation-worker.ts';

export interface WorkerPreparationOptions {
  /** Worker threads (INGEST_CONVERT_WORKERS). */
  workers: number;
  /** One document's conversion and chunking past this is stopped (INGEST_CONVERT_TIMEOUT_MS): RAG_CONVERSION_TIMEOUT. */
  timeoutMs: number;
  converters: EmbeddedConverterOptions;
  /** A worker's heap limit (default 1024 MiB): past it the worker dies and only its document fails (RAG_DOCUMENT_TOO_COMPLEX). */
  heapMb?: number;
  /**
   * What a worker may hold outside its heap, ArrayBuffers included (default 256 MiB): past it the worker stops
   * itself and only its document fails (RAG_DOCUMENT_TOO_COMPLEX). See buffer-watch.ts.
   */
  buffersMb?: number;
  /** The worker's script (default: document-preparation-worker); the tests give workers that misbehave. */
  workerScript?: URL;
}

export const DEFAULT_HEAP_MB = 1024;
export const DEFAULT_BUFFERS_MB = 256;
/**
 * A stopped or timed-out task's worker is asked to clean up, then terminated after this long: a worker busy
 * converting never answers, and SIGTERM must stop the run within seconds.
 */
const TERMINATE_AFTER_MS = 200;
/** The worker's methods (document-preparation-worker.ts). */
const PREPARE = 'prepare';
const READY = 'ready';

/** Worker threads for INGEST_CONCURRENCY documents at once, at most one a core. */
export function defaultConvertWorkers(concurrency: number): number {
  return Math.max(1, Math.min(concurrency, availableParallelism()));
}

/**
 * Converts and chunks documents in worker threads, so one expensive document never holds the job's event
 * loop (its `.writing` heartbeat, its answer to SIGTERM), documents convert on every core, and each has a
 * time budget: a worker past it, or past its heap limit, is terminated and only that document fails. So is one
 * past its budget outside the heap (buffer-watch.ts), which V8's heap limit does not see.
 * Documents of the embedded converters are converted in the worker by its own converter; those of another
 * converter (docling-serve, over HTTP) are converted here and chunked there.
 */
export class WorkerPreparation implements DocumentPreparation {
  private readonly pool: workerpool.Pool;
  private readonly heapMb: number;
  private readonly buffersMb: number;
  private started: Promise<unknown> | undefined;
  private closed: Promise<void> | undefined;

  constructor(private readonly options: WorkerPreparationOptions) {
    this.heapMb = options.heapMb ?? DEFAULT_HEAP_MB;
    this.buffersMb = options.buffersMb ?? DEFAULT_BUFFERS_MB;
    this.pool = workerpool.pool(fileURLToPath(options.workerScript ?? preparationWorkerScript()), {
      workerType: 'thread',
      minWorkers: 'max',
      maxWorkers: options.workers,
      workerTerminateTimeout: TERMINATE_AFTER_MS,
      workerThreadOpts: { resourceLimits: { maxOldGenerationSizeMb: this.heapMb } },
    });
  }

  /**
   * Every worker loaded (a worker thread takes a moment, seconds from source through tsx), so that a document's
   * time budget counts its own conversion only; asked once, before the first document.
   */
  private workersStarted(): Promise<unknown> {
    this.started ??= Promise.all(Array.from({ length: this.options.workers }, () => this.pool.exec(READY, [])));
    return this.started;
  }

  async prepare({ converter, bytes, uri, chunking, signal }: PreparationRequest): Promise<PreparedDocument> {
    const converted = converter.offThread ? undefined : await asDocumentFault(() => convertDocument(converter, bytes, uri, signal));
    await this.workersStarted();
    signal?.throwIfAborted();
    // The bytes are copied to the worker: a Buffer read from a file may share its memory with others.
    const task: PreparationTask = { uri, chunking, converterOptions: this.options.converters, buffersMb: this.buffersMb, ...(converted ? { converted } : { bytes }) };
    // A worker past its buffer budget says so (workerEmit) before it ends its thread: the message arrives before the exit.
    let buffersExceeded: BuffersExceeded | undefined;
    const on = (event: unknown) => {
      if (isBuffersExceeded(event)) buffersExceeded = event;
    };
    // A task past its timeout, or cancelled, has its worker terminated (https://github.com/josdejong/workerpool#promises).
    const running = this.pool.exec(PREPARE, [task], { on }).timeout(this.options.timeoutMs);
    const cancel = () => {
      // workerpool's cancel() rejects the task's promise, which `await` below sees, and rethrows the
      // cancellation synchronously out of the abort listener: caught here so as not to become uncaught.
      try {
        running.cancel();
      } catch (error) {
        if (!(error instanceof workerpool.Promise.CancellationError)) throw error;
      }
    };
    signal?.addEventListener('abort', cancel, { once: true });
    let outcome: PreparationOutcome;
    try {
      outcome = (await running) as PreparationOutcome;
    } catch (error) {
      throw this.failureOf(error, uri, signal, buffersExceeded);
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
    if ('prepared' in outcome) return outcome.prepared;
    const { failure } = outcome;
    throw 'code' in failure ? new RagError(failure.code, failure.detail) : new RagError('RAG_DOCUMENT_UNREADABLE', `(${failure.message})`);
  }

  /** Terminates the workers; a second call waits for the first. */
  close(): Promise<void> {
    this.closed ??= this.pool.terminate(true).then(() => undefined);
    return this.closed;
  }

  private failureOf(error: unknown, uri: string, signal: AbortSignal | undefined, buffersExceeded: BuffersExceeded | undefined): unknown {
    if (signal?.aborted) return signal.reason ?? error;
    if (buffersExceeded || exitedFor(error, BUFFERS_EXCEEDED_EXIT_CODE)) {
      const held = buffersExceeded ? `${buffersExceeded.buffersExceeded.heldMb} MiB` : `more than ${this.buffersMb} MiB`;
      return new RagError(
        'RAG_DOCUMENT_TOO_COMPLEX',
        `(converting it held ${held} outside the heap, decoded streams and other buffers, past INGEST_CONVERT_BUFFERS_MB: ${this.buffersMb} MiB)`,
        { cause: error },
      );
    }
    if (error instanceof workerpool.Promise.TimeoutError) return new RagError('RAG_CONVERSION_TIMEOUT', `(${uri}: stopped after ${this.options.timeoutMs / 1000} s)`);
    if (isOutOfMemory(error)) {
      return new RagError('RAG_DOCUMENT_TOO_COMPLEX', `(converting it needed more than ${this.heapMb} MiB)`, { cause: error });
    }
    return error;
  }
}

/** From source the worker is TypeScript, loaded through tsx; in dist/ it is a bundle of its own beside this one. */
function preparationWorkerScript(): URL {
  const fromSource = import.meta.url.endsWith('.ts');
  return new URL(fromSource ? './document-preparation-worker.dev.mjs' : './document-preparation-worker.js', import.meta.url);
}

/** A worker that ended its thread with this exit code: workerpool's TerminateError names it in its message. */
function exitedFor(error: unknown, exitCode: number): boolean {
  return error instanceof Error && error.message.includes(`exitCode: \`${exitCode}\``);
}

/** A worker past its heap limit: workerpool's TerminateError holds the worker's own error as its cause. */
function isOutOfMemory(error: unknown): boolean {
  const failure = error as { code?: string; cause?: { code?: string } } | undefined;
  return failure?.code === 'ERR_WORKER_OUT_OF_MEMORY' || failure?.cause?.code === 'ERR_WORKER_OUT_OF_MEMORY';
}
