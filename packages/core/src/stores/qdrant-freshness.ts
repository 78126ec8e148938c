import { FRESHNESS_MIDPOINT, UNKNOWN_MODIFIED_AT, type FreshnessBoost } from '../search-filter/freshness.ts';

/** The payload key of a document's modified time (epoch seconds), as qdrant-search-filter.ts writes it. */
const MODIFIED_AT = 'modified_at';

/**
 * The recency boost as a Qdrant score-boosting formula over the fused prefetch (Qdrant ≥ 1.14):
 * `$score + weight · exp_decay(modified_at; target now, scale half-life, midpoint 0.5)`. `modified_at` is read as
 * a number variable; a point without it takes `defaults` (the epoch: no boost), where Qdrant would otherwise fail
 * the query ("No value found in a payload nor defaults"). See search-filter/freshness.ts for the formula's meaning.
 * https://qdrant.tech/documentation/search/search-relevance/#score-boosting (formula, defaults, exp_decay)
 * https://api.qdrant.tech/api-reference/search/query-points (FormulaQuery, DecayParamsExpression)
 */
export function freshnessFormula(boost: FreshnessBoost) {
  const decay = { exp_decay: { x: MODIFIED_AT, target: boost.now, scale: boost.halfLifeSeconds, midpoint: FRESHNESS_MIDPOINT } };
  return {
    formula: { sum: ['$score', { mult: [boost.weight, decay] }] },
    defaults: { [MODIFIED_AT]: UNKNOWN_MODIFIED_AT },
  };
}

/** A hit's modified time from its payload, when the point carries one. */
export function modifiedAtOfPayload(payload: Record<string, unknown>): number | undefined {
  const value = payload[MODIFIED_AT];
  return typeof value === 'number' ? value : undefined;
}
