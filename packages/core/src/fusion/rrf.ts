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

/** How much each leg of a hybrid search counts in the fusion (FUSION_WEIGHTS); 1 and 1 is plain RRF. */
export interface FusionWeights {
  dense: number;
  sparse: number;
}

/** RRF's constant and the legs' weights (RRF_K, FUSION_WEIGHTS), as Qdrant ≥ 1.17 takes them in `{rrf: {k, weights}}`. */
export interface RrfParameters {
  k: number;
  weights: FusionWeights;
}

export const EQUAL_WEIGHTS: FusionWeights = Object.freeze({ dense: 1, sparse: 1 });

export const DEFAULT_RRF: RrfParameters = Object.freeze({ k: QDRANT_RRF_K, weights: EQUAL_WEIGHTS });

/** True when the parameters are what a server without `k`/`weights` support does anyway. */
export function isPlainRrf(parameters: RrfParameters): boolean {
  return parameters.k === QDRANT_RRF_K && parameters.weights.dense === 1 && parameters.weights.sparse === 1;
}

/** `dense:2,sparse:1` (either order, both named) → weights; otherwise the reason it is refused. */
export function parseFusionWeights(text: string): FusionWeights | string {
  const weights: Partial<FusionWeights> = {};
  for (const part of text.split(',')) {
    const match = /^\s*(dense|sparse)\s*:\s*([0-9]*\.?[0-9]+)\s*$/.exec(part);
    if (!match) return `expected "dense:<weight>,sparse:<weight>" (e.g. dense:1,sparse:1), got "${text}"`;
    weights[match[1] as keyof FusionWeights] = Number(match[2]);
  }
  if (weights.dense === undefined || weights.sparse === undefined) return `name both legs: "dense:<weight>,sparse:<weight>", got "${text}"`;
  if (weights.dense <= 0 && weights.sparse <= 0) return 'at least one weight must be above 0';
  return { dense: weights.dense, sparse: weights.sparse };
}

/**
 * Qdrant's `position_score`: `1 / ((position + 1) / weight + k - 1)`, position 0-based, every step in
 * f32; `1 / (position + k)` at weight 1. A weight divides the 1-based rank: at weight 3 the third point
 * of a list scores what its first scores at weight 1. A weight ≤ 0 contributes nothing.
 */
function positionScore(position: number, k: number, weight: number): number {
  if (weight <= 0) return 0;
  const f32 = Math.fround;
  return f32(1 / f32(f32(f32(f32(position + 1) / f32(weight)) + k) - 1));
}

/**
 * Qdrant's server-side `rrf_scoring`: each id scores Σ position_score over the rankings it appears in;
 * input scores are ignored. Accumulated in f32 like Qdrant (`Math.fround`), so the numbers equal what
 * the server returns (1/2 + 1/3 + 1/4 = 1.0833334). `weights`, one per ranking, default to 1 each.
 * Qdrant sorts by score descending and "does not break ties" (hash-map order); we break them by
 * id ascending so the embedded store is deterministic.
 * https://github.com/qdrant/qdrant/blob/master/lib/segment/src/common/reciprocal_rank_fusion.rs
 */
export function reciprocalRankFusion(
  rankings: readonly (readonly string[])[],
  k: number = QDRANT_RRF_K,
  weights?: readonly number[],
): FusedMatch[] {
  if (weights && weights.length !== rankings.length) {
    throw new RangeError(`RRF needs one weight per ranking: got ${weights.length} for ${rankings.length}`);
  }
  const scores = new Map<string, number>();
  rankings.forEach((ranking, leg) => {
    const weight = weights?.[leg] ?? 1;
    ranking.forEach((id, position) => {
      scores.set(id, Math.fround((scores.get(id) ?? 0) + positionScore(position, k, weight)));
    });
  });
  return [...scores]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The dense and sparse rankings of a hybrid search, fused with these parameters (dense first, as Qdrant's prefetches). */
export function fuseHybrid(dense: readonly string[], sparse: readonly string[], parameters: RrfParameters = DEFAULT_RRF): FusedMatch[] {
  return reciprocalRankFusion([dense, sparse], parameters.k, [parameters.weights.dense, parameters.weights.sparse]);
}
