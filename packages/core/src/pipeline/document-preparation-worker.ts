/**
 * The task of a document-preparation worker thread (see worker-preparation.ts): a document converted by
 * the embedded converters and chunked, or a document converted elsewhere (docling-serve) chunked.
 * Errors come back as data: a RagError's class and code do not cross threads.
 */
import workerpool from 'workerpool';
import { chunkDocument } from '../chunking/chunk-markdown.ts';
import type { SplitOptions } from '../chunking/split-text.ts';
import { convertDocument, type ConvertedDocument, type Converter } from '../converters/converter.ts';
import { extensionOf } from '../converters/converter-registry.ts';
import { type EmbeddedConverterOptions, loadEmbeddedConverter } from '../converters/converters-from-config.ts';
import { type ErrorCode, isRagError } from '../errors.ts';
import { stopPastBuffers } from './buffer-watch.ts';
import { documentFaultOf } from './document-faults.ts';
import { preparedOf, type PreparedDocument } from './document-preparation.ts';

export interface PreparationTask {
  uri: string;
  chunking: SplitOptions;
  /** The document's bytes, for the worker's own embedded converter... */
  bytes?: Uint8Array | undefined;
  /** ...or the document as converted on the main thread. */
  converted?: ConvertedDocument | undefined;
  converterOptions: EmbeddedConverterOptions;
  /** What the worker may hold outside its heap while it prepares the document (INGEST_CONVERT_BUFFERS_MB). */
  buffersMb?: number | undefined;
}

export type PreparationOutcome = { prepared: PreparedDocument } | { failure: { code: ErrorCode; detail: string | undefined } | { message: string } };

const converters = new Map<string, Promise<Converter> | undefined>();

async function prepare(task: PreparationTask): Promise<PreparationOutcome> {
  const stopWatching = task.buffersMb === undefined ? undefined : stopPastBuffers(task.buffersMb);
  try {
    const converted = task.converted ?? (await convertHere(task));
    return { prepared: preparedOf(converted, chunkDocument(converted, task.uri, task.chunking)) };
  } catch (error) {
    const fault = documentFaultOf(error);
    return { failure: isRagError(fault) ? { code: fault.code, detail: fault.detail } : { message: fault instanceof Error ? fault.message : String(fault) } };
  } finally {
    stopWatching?.();
  }
}

async function convertHere(task: PreparationTask): Promise<ConvertedDocument> {
  const converter = await converterFor(extensionOf(task.uri), task.converterOptions);
  if (!converter || !task.bytes) throw new Error(`no embedded converter for ${task.uri}`);
  return convertDocument(converter, Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength), task.uri);
}

function converterFor(extension: string, options: EmbeddedConverterOptions): Promise<Converter> | undefined {
  const key = `${extension} ${JSON.stringify(options)}`;
  if (!converters.has(key)) converters.set(key, loadEmbeddedConverter(extension, options));
  return converters.get(key);
}

/** Answers once the worker has loaded: the pool waits for it before a document's time budget starts. */
function ready(): boolean {
  return true;
}

workerpool.worker({ prepare, ready });
