import type { Chunk, ContextLock } from '../domain.ts';
import { documentLead, LEAD_VERSION } from './document-lead.ts';

export interface ContextDocument {
  uri: string;
  markdown: string;
  /** SHA-256 of the document's bytes: part of the cache key. */
  contentHash: string;
  /** The document's access groups (none: public); a cached context is served again only while they stay the same. */
  groups?: readonly string[] | undefined;
}

/** What writing one document's contexts did; the ingest summary adds them up. */
export interface DocumentContexts {
  /** One per chunk, '' when the chunk has none. */
  contexts: string[];
  /** Written by the gateway during this run. */
  written: number;
  /** Found in the cache: nothing asked. */
  cached: number;
  /** The gateway failed: indexed without context, counted as errors, retried next run. */
  failed: number;
  /** Left without context because the run's token budget was spent: retried next run. */
  deferred: number;
  promptTokens: number;
  completionTokens: number;
}

/** Writes the context of each chunk of a document (CONTEXT_MODE lead or llm). */
export interface ChunkContexts {
  readonly lock: ContextLock;
  /** Describes the mode for logs and reports, e.g. `lead (lead-1)`. */
  readonly description: string;
  contextsFor(document: ContextDocument, chunks: readonly Chunk[], signal?: AbortSignal): Promise<DocumentContexts>;
  /** Forgets what was kept of these documents (cached contexts), once the ingest deleted them from the index. */
  forget?(sources: readonly string[]): Promise<void>;
}

export const NO_CONTEXT: ContextLock = { mode: 'off', promptVersion: null };

export function emptyDocumentContexts(contexts: string[]): DocumentContexts {
  return { contexts, written: 0, cached: 0, failed: 0, deferred: 0, promptTokens: 0, completionTokens: 0 };
}

/** CONTEXT_MODE=lead: every chunk of a document gets the document's lead; no model, nothing to cache. */
export class LeadContexts implements ChunkContexts {
  readonly lock: ContextLock = { mode: 'lead', promptVersion: LEAD_VERSION };
  readonly description = `lead (${LEAD_VERSION})`;

  async contextsFor(document: ContextDocument, chunks: readonly Chunk[]): Promise<DocumentContexts> {
    const lead = documentLead(document.markdown, document.uri);
    return emptyDocumentContexts(chunks.map(() => lead));
  }
}
