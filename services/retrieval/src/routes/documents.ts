import { extname } from 'node:path';
import { isRagError, RagError, type DocumentOrigin, type PassageReader } from '@rag/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { documentLinkResponse } from '../api-schemas.ts';
import type { OpenGate } from '../store-gate.ts';
import { sendFile } from './document-file-reply.ts';
import { visibleGroupsOf } from './search.ts';

const CONTENT_TYPES: Record<string, string> = {
  '.md': 'text/markdown; charset=utf-8',
  '.markdown': 'text/markdown; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

type DocumentLink = z.infer<typeof documentLinkResponse>;

/**
 * Longer than any source: a GCS object name is at most 1,024 bytes (https://cloud.google.com/storage/docs/objects#naming)
 * plus `gs://<bucket>/`, a Linux path 4,096 (PATH_MAX).
 */
const MAX_SOURCE_LENGTH = 4096;

/**
 * GET /documents/<source>: the original of a cited document (the source URL-encoded as citations name
 * it). Visible exactly when its passages are: a document outside the caller's groups, or not indexed,
 * is RAG_DOCUMENT_NOT_FOUND, as a passage would be. A document is written by anyone, so it is sent
 * under a sandboxing Content-Security-Policy: an HTML file cannot run script on the API's origin.
 */
export function registerDocumentsRoute(app: FastifyInstance, deps: { passages: PassageReader; documents?: DocumentOrigin | undefined; storeGate?: OpenGate | undefined }): void {
  // Every answer, an error's too: a document (or that it exists) is for this caller only, never for a shared cache.
  const onSend = async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    reply.header('cache-control', 'private, no-store');
    return payload;
  };
  // One path segment: the source URL-encoded (docs%2Fapi.md), as a citation's source names it.
  app.get('/documents/:source', { onSend }, async (request, reply) => {
    const { source } = request.params as { source: string };
    if (source.length > MAX_SOURCE_LENGTH) throw new RagError('RAG_DOCUMENT_NAME_TOO_LONG');
    if (!deps.documents) throw new RagError('RAG_DOCUMENTS_NOT_SERVED');
    await deps.storeGate?.ready();
    await assertVisible(deps.passages, source, visibleGroupsOf(request));
    const location = await deps.documents.locate(source);
    if (location.kind === 'redirect') {
      // A page holding an API key cannot follow a cross-origin redirect with it: it asks for the URL instead.
      if (acceptsJson(request.headers.accept)) return { url: location.url, expires_at: location.expiresAt?.toISOString() } satisfies DocumentLink;
      return reply.redirect(location.url, 302);
    }
    reply
      .header('content-type', CONTENT_TYPES[extname(location.path).toLowerCase()] ?? 'application/octet-stream')
      .header('content-security-policy', "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:")
      .header('x-content-type-options', 'nosniff');
    // The file must be the version that was indexed (its citations quote that one): a folder source records its mtime and size.
    let indexed: string | undefined;
    try {
      indexed = await deps.passages.sourceVersion(source);
    } catch (error) {
      await location.file.close();
      throw error;
    }
    if (indexed !== undefined && indexed !== location.version) {
      await location.file.close();
      throw new RagError('RAG_DOCUMENT_CHANGED', '(it is not the indexed version)');
    }
    return sendFile(request, reply, location);
  });
}

function acceptsJson(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*application\/json\b/i.test(accept);
}

/** Every indexed document has a chunk 0: read through the caller's groups, it tells whether they may see the document. */
async function assertVisible(passages: PassageReader, source: string, visibleGroups: readonly string[]): Promise<void> {
  try {
    await passages.passage(source, 0, visibleGroups, 0);
  } catch (error) {
    if (isRagError(error) && error.code === 'RAG_PASSAGE_NOT_FOUND') throw new RagError('RAG_DOCUMENT_NOT_FOUND', `(${source.slice(0, 200)})`);
    throw error;
  }
}
