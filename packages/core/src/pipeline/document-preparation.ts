import { setTimeout as nextTurn } from 'node:timers/promises';
import { chunkDocument } from '../chunking/chunk-markdown.ts';
import type { SplitOptions } from '../chunking/split-text.ts';
import { convertDocument, type ConvertedDocument, type Converter } from '../converters/converter.ts';
import type { Chunk } from '../domain.ts';
import { asDocumentFault } from './document-faults.ts';

/** A document turned into chunks, with what the rest of the ingest reads of its conversion. */
export interface PreparedDocument {
  /** The converted Markdown (its title, CONTEXT_MODE's lead and prompts read it). */
  markdown: string;
  chunks: Chunk[];
  linkList?: ConvertedDocument['linkList'];
}

export interface PreparationRequest {
  converter: Converter;
  bytes: Buffer;
  uri: string;
  chunking: SplitOptions;
  signal?: AbortSignal | undefined;
}

/** Converts and chunks documents: on the job's own thread (InProcessPreparation), or in worker threads (WorkerPreparation). */
export interface DocumentPreparation {
  prepare(request: PreparationRequest): Promise<PreparedDocument>;
  /** Stops what it started (worker threads). */
  close(): Promise<void>;
}

/**
 * On the job's own thread: converting and chunking a large document hold the event loop (the `.writing`
 * heartbeat, SIGTERM) for as long as they take, with a timers turn in between. What tests and library
 * callers get by default; the ingest job converts in worker threads.
 */
export class InProcessPreparation implements DocumentPreparation {
  async prepare({ converter, bytes, uri, chunking, signal }: PreparationRequest): Promise<PreparedDocument> {
    const converted = await asDocumentFault(() => convertDocument(converter, bytes, uri, signal));
    // setImmediate would not wait for due timers.
    await nextTurn(0);
    signal?.throwIfAborted();
    return preparedOf(converted, await asDocumentFault(() => chunkDocument(converted, uri, chunking)));
  }

  async close(): Promise<void> {}
}

export function preparedOf(converted: ConvertedDocument, chunks: Chunk[]): PreparedDocument {
  return { markdown: converted.markdown, chunks, ...(converted.linkList ? { linkList: converted.linkList } : {}) };
}
