import { auroc, countBelow } from './metrics.ts';

/** The /chat relevance decision measured on a golden set: what each rule would wrongly refuse or accept. */

export interface ScoredQuestion {
  score: number;
  coverage: number;
}

export interface RuleOutcome {
  rule: string;
  /** In-scope questions the rule would decline: /chat would say "not covered" although the docs answer. */
  inScopeRefused: number;
  /** Out-of-scope questions the rule would let through to the model. */
  outOfScopeAccepted: number;
}

export interface ThresholdAnalysis {
  inScope: number;
  outOfScope: number;
  inScopeScores: { min: number; median: number; max: number } | undefined;
  outOfScopeScores: { min: number; median: number; max: number } | undefined;
  coverageAuroc: number | undefined;
  /** The rule used when RAG_MIN_SCORE is unset: best passage holds ≥ MIN_QUERY_COVERAGE of the question's stems. */
  coverageRule: RuleOutcome;
  /** The same rule at other coverage levels, to show what the MIN_QUERY_COVERAGE constant trades. */
  coverageSweep: RuleOutcome[];
  /** RAG_MIN_SCORE as configured (or --min-score), when one is. */
  configured: RuleOutcome | undefined;
  /** The score threshold with the fewest wrong decisions on this set (ties: fewer in-scope refusals, then lower). */
  bestScoreThreshold: (RuleOutcome & { threshold: number }) | undefined;
  /** The highest threshold that refuses no in-scope question of this set. */
  zeroRefusalThreshold: (RuleOutcome & { threshold: number }) | undefined;
}

function spread(values: number[]) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const median = sorted.length % 2 === 1 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { min: sorted[0]!, median, max: sorted[sorted.length - 1]! };
}

function scoreRule(inScope: ScoredQuestion[], outOfScope: ScoredQuestion[], threshold: number): RuleOutcome & { threshold: number } {
  const inScores = inScope.map((entry) => entry.score);
  const outScores = outOfScope.map((entry) => entry.score);
  return {
    rule: `RAG_MIN_SCORE=${round(threshold)}`,
    threshold,
    inScopeRefused: countBelow(inScores, threshold),
    outOfScopeAccepted: outScores.length - countBelow(outScores, threshold),
  };
}

const COVERAGE_LEVELS = [0.2, 0.25, 0.34, 0.5];

export function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export function analyseThresholds(inScope: ScoredQuestion[], outOfScope: ScoredQuestion[], configured: number | undefined, minCoverage: number): ThresholdAnalysis {
  const coverageAt = (level: number, rule: string): RuleOutcome => ({
    rule,
    inScopeRefused: inScope.filter((entry) => entry.coverage < level).length,
    outOfScopeAccepted: outOfScope.filter((entry) => entry.coverage >= level).length,
  });
  const coverageRule = coverageAt(minCoverage, `coverage ≥ ${minCoverage} (RAG_MIN_SCORE unset, the current rule)`);
  const coverageSweep = COVERAGE_LEVELS.filter((level) => level !== minCoverage).map((level) => coverageAt(level, `coverage ≥ ${level}`));
  const candidates = [...new Set([...inScope, ...outOfScope].map((entry) => entry.score))].sort((a, b) => a - b);
  let best: (RuleOutcome & { threshold: number }) | undefined;
  for (const threshold of candidates) {
    const outcome = scoreRule(inScope, outOfScope, threshold);
    const errors = outcome.inScopeRefused + outcome.outOfScopeAccepted;
    const bestErrors = best ? best.inScopeRefused + best.outOfScopeAccepted : Infinity;
    if (errors < bestErrors || (errors === bestErrors && best && outcome.inScopeRefused < best.inScopeRefused)) best = outcome;
  }
  const minInScope = spread(inScope.map((entry) => entry.score))?.min;
  return {
    inScope: inScope.length,
    outOfScope: outOfScope.length,
    inScopeScores: spread(inScope.map((entry) => entry.score)),
    outOfScopeScores: spread(outOfScope.map((entry) => entry.score)),
    coverageAuroc: auroc(inScope.map((entry) => entry.coverage), outOfScope.map((entry) => entry.coverage)),
    coverageRule,
    coverageSweep,
    configured: configured === undefined ? undefined : scoreRule(inScope, outOfScope, configured),
    bestScoreThreshold: outOfScope.length > 0 ? best : undefined,
    zeroRefusalThreshold: minInScope === undefined ? undefined : scoreRule(inScope, outOfScope, minInScope),
  };
}
