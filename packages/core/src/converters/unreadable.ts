import { RagError } from '../errors.ts';

/** The error of a document that cannot be turned into text; the reason names what is wrong with it. */
export function unreadable(reason: string, cause?: unknown): RagError {
  return new RagError('RAG_DOCUMENT_UNREADABLE', `(${reason})`, { cause });
}

export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
