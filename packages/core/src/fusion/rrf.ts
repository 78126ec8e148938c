/**
 * Qdrant's default RRF constant (`DEFAULT_RRF_K`), not the literature's 60: a point first in
 * every one of two lists scores 1.0.
 * https://github.com/qdrant/qdrant/blob/master/lib/segment/src/common/reciprocal_rank_fusion.rs
 */
export const QDRANT_RRF_K = 2;

export interface FusedMatch {
  id: string;
  score: number;
}

/** Qdrant's `position_score` with weight 1: `1 / (position + k)`, position 0-based, in f32. */
function positionScore(position: number, k: number): number {
  return Math.fround(1 / (position + k));
}

/**
 * Qdrant's server-side `rrf_scoring`: each id scores Σ 1/(position + k) over the rankings it
 * appears in; input scores are ignored. Accumulated in f32 like Qdrant (`Math.fround`), so the
 * numbers equal what the server returns (1/2 + 1/3 + 1/4 = 1.0833334).
 * Qdrant sorts by score descending and "does not break ties" (hash-map order); we break them by
 * id ascending so the embedded store is deterministic.
 * https://github.com/qdrant/qdrant/blob/master/lib/segment/src/common/reciprocal_rank_fusion.rs
 */
export function reciprocalRankFusion(
  rankings: readonly (readonly string[])[],
  k: number = QDRANT_RRF_K,
): FusedMatch[] {
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    ranking.forEach((id, position) => {
      scores.set(id, Math.fround((scores.get(id) ?? 0) + positionScore(position, k)));
    });
  }
  return [...scores]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
