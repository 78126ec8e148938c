import type { SearchHit } from '../domain.ts';
import { QDRANT_RRF_K, reciprocalRankFusion } from '../fusion/rrf.ts';

/** FOLLOW_UP_SEARCH: a condensed follow-up searched alone, or fused with its LLM-free expansion (the default). */
export type FollowUpSearch = 'fused' | 'condensed';

/**
 * A condensed follow-up's passages fused with those of its LLM-free expansion (expanded query and topic leg), equal
 * weights, the product's RRF constant. A small model's condensation is often wrong ("django session engine cache" for
 * a question about transactions): alone it lost to the expansion on two of three conversation sets, fused it beats
 * both on all three (eval/reports/conversations*-qwen2.5-coder-1.5b-instruct.md).
 */
export function fuseFollowUpLegs(condensed: readonly SearchHit[], expanded: readonly SearchHit[], k: number = QDRANT_RRF_K): SearchHit[] {
  const byId = new Map([...expanded, ...condensed].map((hit) => [hit.id, hit]));
  const fused = reciprocalRankFusion([condensed.map((hit) => hit.id), expanded.map((hit) => hit.id)], k, [1, 1]);
  return fused.map(({ id, score }) => ({ ...byId.get(id)!, score, fusionScore: score }));
}
