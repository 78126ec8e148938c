import type { FileHandle } from 'node:fs/promises';

/**
 * Where GET /documents/<source> finds the original of an indexed document: a file to send, already open (the
 * caller reads and closes that handle, never the path again), or a URL to redirect to.
 */
export type DocumentLocation =
  | {
      kind: 'file';
      path: string;
      file: FileHandle;
      /** The open file's size and modification time, stat'ed once it was opened: what is sent, and what must not change. */
      size: number;
      mtimeMs: number;
      /** Its version as the ingest records it (`source_version`), to compare with the indexed one. */
      version: string;
    }
  | { kind: 'redirect'; url: string; /** When the URL stops working (a signed URL); absent: never. */ expiresAt?: Date | undefined };

export interface DocumentOrigin {
  /** The original of `source` (as citations name it); RAG_DOCUMENT_NOT_FOUND when this origin has none. */
  locate(source: string): Promise<DocumentLocation>;
}
