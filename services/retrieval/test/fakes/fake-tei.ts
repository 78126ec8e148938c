/**
 * Text Embeddings Inference as its API documents it (https://huggingface.github.io/text-embeddings-inference/):
 * `POST /v1/embeddings {input, model}` → `{object: "list", data: [{object, embedding, index}], model, usage}`,
 * `POST /rerank {query, texts}` → `[{index, score}]` best first, `GET /health` → 200 with an empty body,
 * errors `{error, error_type}`.
 *
 * The "models" are deterministic and cheap but not meaningless, so rankings can be asserted: the embedding is
 * a normalised hashed bag of words, the rerank score the share of the query's words found in the passage.
 */
import type { ServerResponse } from 'node:http';
import { sendJson, type RecordedRequest } from '../../../../packages/core/test/adapters/fake-server.ts';

export const FAKE_EMBED_DIMENSION = 64;

export function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9_]+/g) ?? [];
}

/** FNV-1a, enough to spread words over the buckets. */
function bucket(word: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % FAKE_EMBED_DIMENSION;
}

export function hashedEmbedding(text: string): number[] {
  const vector = new Array<number>(FAKE_EMBED_DIMENSION).fill(0);
  for (const word of words(text)) vector[bucket(word)]! += 1;
  const norm = Math.hypot(...vector) || 1;
  return vector.map((x) => x / norm);
}

export function rerankScore(query: string, text: string): number {
  const queryWords = new Set(words(query).filter((word) => word.length > 2));
  if (queryWords.size === 0) return 0;
  const textWords = new Set(words(text));
  return [...queryWords].filter((word) => textWords.has(word)).length / queryWords.size;
}

export function teiEmbed(request: RecordedRequest, response: ServerResponse): void {
  if (request.method === 'GET' && request.path === '/health') return void response.writeHead(200).end();
  const body = request.body as { input: string[]; model: string };
  if (request.method !== 'POST' || request.path !== '/v1/embeddings') return teiError(response, 404, 'not found', 'validation');
  const data = body.input.map((text, index) => ({ object: 'embedding', embedding: hashedEmbedding(text), index }));
  const tokens = body.input.reduce((sum, text) => sum + words(text).length, 0);
  sendJson(response, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

export function teiRerank(request: RecordedRequest, response: ServerResponse): void {
  if (request.method === 'GET' && request.path === '/health') return void response.writeHead(200).end();
  if (request.method !== 'POST' || request.path !== '/rerank') return teiError(response, 404, 'not found', 'validation');
  const { query, texts } = request.body as { query: string; texts: string[] };
  const scores = texts.map((text, index) => ({ index, score: rerankScore(query, text) }));
  sendJson(response, 200, scores.sort((a, b) => b.score - a.score || a.index - b.index));
}

export function teiError(response: ServerResponse, status: number, error: string, errorType: string): void {
  sendJson(response, status, { error, error_type: errorType });
}
