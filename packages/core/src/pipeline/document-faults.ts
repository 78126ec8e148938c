import { isRagError, RagError, type ErrorCode } from '../errors.ts';

/** Failures of the document itself, which keeps its own points: they do not stand in the way of pruning. */
export const DOCUMENT_FAULTS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['RAG_DOCUMENT_UNREADABLE', 'RAG_DOCUMENT_TOO_LARGE', 'RAG_DOCUMENT_TOO_COMPLEX', 'RAG_CONVERSION_TIMEOUT']);

/**
 * Runs one step of turning a document into chunks (converting, chunking). A RagError keeps its code
 * (RAG_CONVERTER_UNAVAILABLE is docling's fault, not the document's); anything else a parser throws on
 * one document is that document's fault, so that one hostile file can never block pruning: a stack
 * overflow or a string past V8's limits (RangeError) is RAG_DOCUMENT_TOO_COMPLEX, the rest
 * RAG_DOCUMENT_UNREADABLE.
 */
export async function asDocumentFault<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw documentFaultOf(error);
  }
}

export function documentFaultOf(error: unknown): unknown {
  if (isRagError(error) || (error instanceof Error && error.name === 'AbortError')) return error;
  const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new RagError(error instanceof RangeError ? 'RAG_DOCUMENT_TOO_COMPLEX' : 'RAG_DOCUMENT_UNREADABLE', `(${reason})`, { cause: error });
}
