import { pageFields, parseSearchControls, PUBLIC_ONLY, type Retriever, type SearchHit } from '@rag/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { abortOnClientClose } from '../request-abort.ts';
import { parseQueryRequest } from '../request-schema.ts';
import type { OpenGate } from '../store-gate.ts';

export function toSearchResult(hit: SearchHit) {
  return {
    source: hit.source,
    heading_path: hit.headingPath,
    chunk_index: hit.chunkIndex,
    score: hit.score,
    fusion_score: hit.fusionScore,
    text: hit.text,
    ...pageFields(hit.pages),
    ...(hit.boxes?.length ? { boxes: hit.boxes } : {}),
    ...(hit.title === undefined ? {} : { title: hit.title }),
  };
}

/**
 * Sent only when a reranker is configured. false: the results are in the fused (RRF) order, because the
 * reranker is down (RERANK_FALLBACK=fused) or the store returned no more than k candidates.
 */
export function rerankedField(reranked: boolean | undefined): { reranked?: boolean } {
  return reranked === undefined ? {} : { reranked };
}

/**
 * The groups whose documents the caller may read, besides public ones: its API key's (RAG_AUTH_FILE).
 * No caller (no auth file) sees public documents only: access fails closed.
 */
export function visibleGroupsOf(request: FastifyRequest): readonly string[] {
  return request.caller?.groups ?? PUBLIC_ONLY;
}

export function registerSearchRoute(app: FastifyInstance, deps: { retriever: Retriever; storeGate?: OpenGate | undefined; defaultK: number }): void {
  app.post('/search', async (request, reply) => {
    const { query, k } = parseQueryRequest(request.body);
    // filter and max_per_source: the search controls every interface shares (search-filter/search-controls.ts).
    const controls = parseSearchControls(request.body as Record<string, unknown>);
    const signal = abortOnClientClose(reply);
    // A store that could not be opened yet (Qdrant or TEI down at start) is retried here, per request.
    await deps.storeGate?.ready(signal);
    const { hits, reranked } = await deps.retriever.retrieve(query, k ?? deps.defaultK, visibleGroupsOf(request), signal, controls);
    return { results: hits.map(toSearchResult), ...rerankedField(reranked) };
  });
}
