import type { Retriever, SearchHit } from '@rag/core';
import type { FastifyInstance } from 'fastify';
import { abortOnClientClose } from '../request-abort.ts';
import { parseQueryRequest } from '../request-schema.ts';

export function toSearchResult(hit: SearchHit) {
  return {
    source: hit.source,
    heading_path: hit.headingPath,
    chunk_index: hit.chunkIndex,
    score: hit.score,
    fusion_score: hit.fusionScore,
    text: hit.text,
  };
}

export function registerSearchRoute(app: FastifyInstance, deps: { retriever: Retriever; defaultK: number }): void {
  app.post('/search', async (request, reply) => {
    const { query, k } = parseQueryRequest(request.body);
    const hits = await deps.retriever.search(query, k ?? deps.defaultK, abortOnClientClose(reply));
    return { results: hits.map(toSearchResult) };
  });
}
