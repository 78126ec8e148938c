import { z } from 'zod';

/**
 * Freshness: an optional recency boost, off unless a request asks for it. Every interface takes the same field:
 *
 * ```json
 * "freshness": {"half_life_days": 30, "weight": 0.1}
 * ```
 *
 * A candidate's score becomes `rank score + weight · 0.5^(|now − modified| / half_life)`: a document modified now
 * gains `weight`, one a half-life old half of it, one without a known modified time nothing (its time counts as
 * the epoch). The rank score is RRF's over the store's legs (`1/(position + k)` each; one leg when the store is
 * sparse only), so a weight means the same with or without an embedder: 0.1 lifts a fresh passage about as much as
 * rising from 4th to 2nd in one leg (1/4 → 1/3 is +0.083 at k = 2).
 *
 * In Qdrant (≥ 1.14, https://qdrant.tech/documentation/search/search-relevance/#score-boosting) it is a `formula`
 * query over the fused prefetch: `{"sum": ["$score", {"mult": [weight, {"exp_decay": {"x": "modified_at",
 * "target": now, "scale": half_life_seconds, "midpoint": 0.5}}]}]}` with `defaults: {"modified_at": 0}`. Qdrant's
 * exp_decay is `exp(ln(midpoint) / scale · |x − target|)`, so midpoint 0.5 at scale = half-life is the half-life
 * curve (lib/segment/src/index/query_optimization/rescore_formula/parsed_formula.rs, `decay_params_to_lambda`;
 * formula_scorer.rs, `exp_decay`). `modified_at` is the payload's epoch seconds (a number variable); `datetime_key`
 * would need an RFC 3339 string payload. The REST API parses formula constants and `scale` as f32, so `now`,
 * `weight` and the scale are rounded to f32 here once and both stores compute with those exact values.
 */
export const freshnessSchema = z
  .object({
    half_life_days: z.number().gt(0).max(3650).optional().describe('days after which the boost is halved (default 30)'),
    weight: z.number().gt(0).max(1).optional().describe('the boost of a document modified now, added to the fused score (default 0.1)'),
  })
  .strict()
  .describe('optional recency boost: fused score + weight · 0.5^(age / half_life); off when absent');

export type FreshnessInput = z.infer<typeof freshnessSchema>;

export const DEFAULT_HALF_LIFE_DAYS = 30;
export const DEFAULT_FRESHNESS_WEIGHT = 0.1;

/** The boost as both stores compute it: every number already f32 (see above), `now` in epoch seconds. */
export interface FreshnessBoost {
  halfLifeSeconds: number;
  weight: number;
  now: number;
}

/** Qdrant's exp_decay midpoint for a half-life. */
export const FRESHNESS_MIDPOINT = 0.5;
/** What a document without a modified time counts as (the formula's `defaults`): the epoch, so no boost to speak of. */
export const UNKNOWN_MODIFIED_AT = 0;

export function toFreshnessBoost(input: FreshnessInput, nowMs: number = Date.now()): FreshnessBoost {
  const f32 = Math.fround;
  return {
    halfLifeSeconds: f32((input.half_life_days ?? DEFAULT_HALF_LIFE_DAYS) * 86_400),
    weight: f32(input.weight ?? DEFAULT_FRESHNESS_WEIGHT),
    now: f32(Math.floor(nowMs / 1000)),
  };
}

/** weight · exp(ln(0.5) / scale · |modified − now|), in f64 as Qdrant's formula scorer evaluates it. */
export function freshnessBonus(boost: FreshnessBoost, modifiedAt: number | undefined): number {
  const lambda = Math.log(FRESHNESS_MIDPOINT) / boost.halfLifeSeconds;
  return boost.weight * Math.exp(lambda * Math.abs((modifiedAt ?? UNKNOWN_MODIFIED_AT) - boost.now));
}

/** A rank score plus the bonus, rounded to f32 as Qdrant returns scores. */
export function boostedScore(score: number, boost: FreshnessBoost, modifiedAt: number | undefined): number {
  return Math.fround(score + freshnessBonus(boost, modifiedAt));
}
