import type { SearchHit } from '../domain.ts';
import type { Embedder } from '../embedders/embedder.ts';
import type { Reranker } from '../rerankers/reranker.ts';
import { encodeQuery } from '../sparse/bm25-encoder.ts';
import type { VectorStore } from '../stores/vector-store.ts';
import { timed, type Telemetry } from '../telemetry.ts';

export interface RetrieverOptions {
  store: VectorStore;
  embedder?: Embedder | undefined;
  reranker?: Reranker | undefined;
  /** Candidates fetched for the reranker (the seed's RERANK_CANDIDATES, 50). */
  rerankCandidates: number;
  telemetry: Telemetry;
}

/** Qdrant needs each prefetch limit ≥ the query limit; 20 keeps fusion meaningful for small k. */
const MIN_PREFETCH = 20;

/** The query path up to the passages: embed ∥ sparse-encode → hybrid search (RRF) → rerank → top k. */
export class Retriever {
  constructor(private readonly options: RetrieverOptions) {}

  get reranks(): boolean {
    return this.options.reranker !== undefined;
  }

  async search(query: string, k: number, signal?: AbortSignal): Promise<SearchHit[]> {
    const { store, reranker, rerankCandidates, telemetry } = this.options;
    const [dense, sparse] = await Promise.all([this.embedQuery(query, signal), this.encodeSparse(query)]);
    const limit = reranker ? Math.max(rerankCandidates, k) : k;
    const candidates = await timed(
      () => store.search({ dense, sparse, limit, prefetchLimit: Math.max(limit, MIN_PREFETCH) }, signal),
      (seconds) => telemetry.recordStage('search', seconds),
    );
    const ranked = reranker && candidates.length > k ? await this.rerank(query, candidates, signal) : candidates;
    const top = ranked.slice(0, k);
    if (top[0]) telemetry.recordTopScore(top[0].score);
    return top;
  }

  private async embedQuery(query: string, signal?: AbortSignal): Promise<number[] | undefined> {
    const { embedder, telemetry } = this.options;
    if (!embedder) return undefined;
    return timed(
      () => embedder.embedQuery(query, signal),
      (seconds) => {
        telemetry.recordStage('embed', seconds);
        telemetry.recordModelCall('embeddings', embedder.provider ?? 'local', embedder.modelId, seconds);
      },
    );
  }

  private async encodeSparse(query: string) {
    return timed(
      async () => encodeQuery(query),
      (seconds) => this.options.telemetry.recordStage('sparse', seconds),
    );
  }

  private async rerank(query: string, candidates: SearchHit[], signal?: AbortSignal): Promise<SearchHit[]> {
    const reranker = this.options.reranker!;
    const scores = await timed(
      () => reranker.rerank(query, candidates.map((hit) => hit.text), signal),
      (seconds) => {
        this.options.telemetry.recordStage('rerank', seconds);
        this.options.telemetry.recordModelCall('rerank', reranker.provider ?? 'local', reranker.modelId, seconds);
      },
    );
    return scores.flatMap(({ index, score }) => {
      const hit = candidates[index];
      return hit ? [{ ...hit, score, fusionScore: hit.fusionScore, reranked: true }] : [];
    });
  }
}
