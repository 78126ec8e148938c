import { MAX_SEARCH_QUERY_CHARS, RagError } from '@rag/core';
import { z } from 'zod';

export const MAX_QUERY_LENGTH = MAX_SEARCH_QUERY_CHARS;

const querySchema = z.string().trim().min(1).max(MAX_QUERY_LENGTH);
const kSchema = z.number().int().min(1).max(50);

export interface QueryRequest {
  query: string;
  k: number | undefined;
  stream: boolean;
}

/** Validates a /search or /chat body; each kind of bad input has its own stable error code. */
export function parseQueryRequest(body: unknown): QueryRequest {
  if (body === undefined || body === null || body === '') throw new RagError('RAG_EMPTY_BODY');
  if (typeof body !== 'object' || Array.isArray(body)) throw new RagError('RAG_INVALID_REQUEST', 'The body must be a JSON object.');
  const fields = body as Record<string, unknown>;
  const query = querySchema.safeParse(fields['query']);
  if (!query.success) throw new RagError('RAG_INVALID_QUERY', describeQueryProblem(fields['query']));
  const k = fields['k'] === undefined ? undefined : kSchema.safeParse(fields['k']);
  if (k && !k.success) throw new RagError('RAG_INVALID_K', describeKProblem(fields['k']));
  const stream = fields['stream'];
  if (stream !== undefined && typeof stream !== 'boolean') throw new RagError('RAG_INVALID_REQUEST', '"stream" must be true or false.');
  return { query: query.data, k: k?.data, stream: stream === true };
}

/** Names what was sent without echoing it: a body can nest arrays deeper than JSON.stringify recurses. */
function describeKProblem(k: unknown): string {
  if (typeof k === 'number') return `Got ${k}.`;
  return `Got ${k === null ? 'null' : Array.isArray(k) ? 'an array' : `a ${typeof k}`}.`;
}

function describeQueryProblem(query: unknown): string {
  if (query === undefined) return 'It is missing.';
  if (typeof query !== 'string') return `Got a ${Array.isArray(query) ? 'array' : typeof query}.`;
  if (query.trim() === '') return 'It is empty.';
  return `It has ${query.length} characters.`;
}
