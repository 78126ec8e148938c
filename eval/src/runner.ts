import { MIN_QUERY_COVERAGE, queryCoverage, type Bm25Language } from '@rag/core';
import { SEARCH_DEPTH, type EvalBackend } from './backend.ts';
import type { GoldenQuestion, GoldenSet } from './golden-set.ts';
import { auroc, firstHitRank, rankMetrics, type RankMetrics } from './metrics.ts';
import { analyseThresholds, type ThresholdAnalysis } from './thresholds.ts';

export interface QuestionOutcome {
  number: number;
  question: string;
  kind: string | undefined;
  expectedSource: string | undefined;
  expectedSubstring: string | undefined;
  /** 1-based rank of the first hit within SEARCH_DEPTH; absent for a miss or an out-of-scope question. */
  rank: number | undefined;
  /** Rank of the first passage from the expected source, whatever its text (the seed's document-level hit). */
  documentRank: number | undefined;
  topScore: number | undefined;
  /** Share of the question's content stems in the best passage (the /chat rule without RAG_MIN_SCORE). */
  topCoverage: number;
  top: Array<{ source: string; headingPath: string; score: number }>;
}

export interface Gate {
  minHit5: number;
  minMrr: number;
}

export interface GoldenResult {
  set: string;
  file: string;
  backend: string;
  depth: number;
  questions: QuestionOutcome[];
  inScope: RankMetrics;
  /** The same questions scored by document only (expected_substring ignored). */
  documentLevel: RankMetrics;
  byKind: Record<string, RankMetrics>;
  outOfScopeTopScores: Array<{ number: number; question: string; topScore: number | undefined; topCoverage: number }>;
  auroc: number | undefined;
  thresholds: ThresholdAnalysis;
  /** The golden set's reason for its own gate, when it sets one. */
  gateWhy: string | undefined;
  gate: Gate & { passed: boolean; failures: string[] };
}

async function askOne(backend: EvalBackend, entry: GoldenQuestion, language: Bm25Language | undefined): Promise<QuestionOutcome> {
  const passages = await backend.search(entry.question, SEARCH_DEPTH);
  const best = passages[0];
  return {
    number: entry.number,
    question: entry.question,
    kind: entry.kind,
    expectedSource: entry.expectedSource,
    expectedSubstring: entry.expectedSubstring,
    rank: entry.expectedSource ? firstHitRank(passages, { expectedSource: entry.expectedSource, expectedSubstring: entry.expectedSubstring }) : undefined,
    documentRank: entry.expectedSource ? firstHitRank(passages, { expectedSource: entry.expectedSource }) : undefined,
    topScore: best?.score,
    topCoverage: best ? queryCoverage(entry.question, best.text, language) : 0,
    top: passages.slice(0, 3).map((passage) => ({ source: passage.source, headingPath: passage.headingPath, score: passage.score })),
  };
}

/** Asks every question of the set (in order, one at a time: the numbers must not depend on load). */
export async function runGoldenSet(set: GoldenSet, backend: EvalBackend, gate: Gate, configuredMinScore?: number, gateWhy: string | undefined = set.gate?.why): Promise<GoldenResult> {
  const questions: QuestionOutcome[] = [];
  for (const entry of set.questions) questions.push(await askOne(backend, entry, set.bm25Language));
  const inScope = questions.filter((outcome) => outcome.expectedSource !== undefined);
  const outOfScope = questions.filter((outcome) => outcome.expectedSource === undefined);
  const metrics = rankMetrics(inScope.map((outcome) => outcome.rank));
  const byKind: Record<string, RankMetrics> = {};
  for (const kind of new Set(inScope.map((outcome) => outcome.kind ?? 'unlabelled'))) {
    byKind[kind] = rankMetrics(inScope.filter((outcome) => (outcome.kind ?? 'unlabelled') === kind).map((outcome) => outcome.rank));
  }
  const scoresOf = (outcomes: QuestionOutcome[]) => outcomes.map((outcome) => outcome.topScore ?? 0);
  const failures = [
    ...(metrics.hitAt5 < gate.minHit5 ? [`hit@5 ${metrics.hitAt5.toFixed(3)} < ${gate.minHit5}`] : []),
    ...(metrics.mrr < gate.minMrr ? [`MRR ${metrics.mrr.toFixed(3)} < ${gate.minMrr}`] : []),
  ];
  return {
    set: set.name,
    file: set.file,
    backend: backend.description,
    depth: SEARCH_DEPTH,
    questions,
    inScope: metrics,
    documentLevel: rankMetrics(inScope.map((outcome) => outcome.documentRank)),
    byKind,
    outOfScopeTopScores: outOfScope.map(({ number, question, topScore, topCoverage }) => ({ number, question, topScore, topCoverage })),
    auroc: auroc(scoresOf(inScope), scoresOf(outOfScope)),
    thresholds: analyseThresholds(
      inScope.map((outcome) => ({ score: outcome.topScore ?? 0, coverage: outcome.topCoverage })),
      outOfScope.map((outcome) => ({ score: outcome.topScore ?? 0, coverage: outcome.topCoverage })),
      configuredMinScore,
      MIN_QUERY_COVERAGE,
    ),
    gate: { ...gate, passed: failures.length === 0, failures },
    gateWhy,
  };
}
