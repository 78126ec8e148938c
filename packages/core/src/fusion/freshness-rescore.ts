import { boostedScore, type FreshnessBoost } from '../search-filter/freshness.ts';
import { QDRANT_RRF_K, type FusedMatch } from './rrf.ts';

/**
 * What Qdrant's formula query does over the fused prefetch (stores/qdrant-freshness.ts), for the embedded store:
 * the `candidates` best fused matches, each scored `rank score + weight · decay(modified)`, best first (ties by id
 * ascending, as reciprocalRankFusion breaks them).
 */
export function rescoreByFreshness(fused: readonly FusedMatch[], candidates: number, boost: FreshnessBoost, modifiedAtOf: (id: string) => number | undefined): FusedMatch[] {
  return fused
    .slice(0, candidates)
    .map(({ id, score }) => ({ id, score: boostedScore(score, boost, modifiedAtOf(id)) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The boost over a reranked order: each hit ranks by `1/(position + k) + weight · decay(modified)`, the formula the
 * store applied to the fused order with the reranker's order as the one list, so a weight means the same before and
 * after the rerank. Each hit keeps its reranker score; only the order changes (ties keep the reranker's order).
 */
export function boostRerankedOrder<T extends { modifiedAt?: number | undefined }>(hits: readonly T[], boost: FreshnessBoost, k: number = QDRANT_RRF_K): T[] {
  return hits
    .map((hit, position) => ({ hit, key: boostedScore(1 / (position + k), boost, hit.modifiedAt) }))
    .sort((a, b) => b.key - a.key)
    .map(({ hit }) => hit);
}
