import { DEFAULT_RRF, type RrfParameters } from '@rag/core';
import type { QueryLegs } from './fusion-legs.ts';
import { foldOf, objective, summarize, type JudgedQuery, type RetrievalTask, type TaskMetrics } from './retrieval-task.ts';

/**
 * Choosing RRF's k and the legs' weights on half of a set's questions and judging the choice on the other
 * half only: the gain a collection can expect on questions nobody tuned for.
 */

/** dense:sparse ratios tried; the heavier leg weighs the ratio, the other 1 (3 → dense 3, sparse 1). */
const RATIOS = [1 / 4, 1 / 3, 1 / 2, 2 / 3, 1, 3 / 2, 2, 3, 4];
const KS = [2, 5, 10, 20, 60];

const round = (value: number) => Math.round(value * 1000) / 1000;

/** The grid, plain RRF first: a candidate replaces it only by doing strictly better. */
export function fusionGrid(): RrfParameters[] {
  const grid = KS.flatMap((k) => RATIOS.map((ratio) => ({ k, weights: ratio >= 1 ? { dense: round(ratio), sparse: 1 } : { dense: 1, sparse: round(1 / ratio) } })));
  const isPlain = (candidate: RrfParameters) => candidate.k === DEFAULT_RRF.k && candidate.weights.dense === 1 && candidate.weights.sparse === 1;
  return [...grid.filter(isPlain), ...grid.filter((candidate) => !isPlain(candidate))];
}

export interface LegsOfQuery {
  query: JudgedQuery;
  legs: Pick<QueryLegs, 'fused'>;
}

export function metricsWith(task: RetrievalTask, queries: LegsOfQuery[], parameters: RrfParameters): TaskMetrics {
  return summarize(task.kind, queries.map(({ query, legs }) => query.judge(legs.fused(parameters))));
}

/** The grid point with the best objective on these queries (plain RRF unless something is strictly better). */
export function bestParameters(task: RetrievalTask, queries: LegsOfQuery[]): { parameters: RrfParameters; metrics: TaskMetrics } {
  let best: { parameters: RrfParameters; metrics: TaskMetrics } | undefined;
  for (const parameters of fusionGrid()) {
    const metrics = metricsWith(task, queries, parameters);
    if (!best || objective(task.kind, metrics) > objective(task.kind, best.metrics) + 1e-9) best = { parameters, metrics };
  }
  return best!;
}

export interface FoldOutcome {
  /** The half the parameters were chosen on (0 or 1) and its size; the other half is judged. */
  tunedOn: 0 | 1;
  tuningQueries: number;
  heldOutQueries: number;
  chosen: RrfParameters;
  /** Objective of the chosen parameters on the tuning half (in-sample, optimistic). */
  tuningObjective: number;
  tuningObjectivePlain: number;
  /** The held-out half with plain RRF and with the chosen parameters. */
  heldOutPlain: TaskMetrics;
  heldOutTuned: TaskMetrics;
}

export interface TuningOutcome {
  objective: string;
  folds: [FoldOutcome, FoldOutcome];
  /** Mean held-out gain of the objective over the two folds. */
  meanHeldOutGain: number;
  /** Chosen on every question: what to configure for this collection (its evidence is the folds' held-out gain). */
  wholeSet: { parameters: RrfParameters; objective: number; objectivePlain: number };
  /** What each query is answered with in the cross-fitted "tuned" mode: the parameters chosen on the other half. */
  parametersFor(query: JudgedQuery): RrfParameters;
}

/** Two-fold: tune on half 0, judge on half 1, and the other way round. */
export function tuneFusion(task: RetrievalTask, queries: LegsOfQuery[]): TuningOutcome {
  const halves: [LegsOfQuery[], LegsOfQuery[]] = [[], []];
  for (const entry of queries) halves[foldOf(entry.query)].push(entry);
  const fold = (tunedOn: 0 | 1): FoldOutcome => {
    const tuning = halves[tunedOn];
    const heldOut = halves[tunedOn === 0 ? 1 : 0];
    const { parameters, metrics } = bestParameters(task, tuning);
    return {
      tunedOn,
      tuningQueries: tuning.length,
      heldOutQueries: heldOut.length,
      chosen: parameters,
      tuningObjective: objective(task.kind, metrics),
      tuningObjectivePlain: objective(task.kind, metricsWith(task, tuning, DEFAULT_RRF)),
      heldOutPlain: metricsWith(task, heldOut, DEFAULT_RRF),
      heldOutTuned: metricsWith(task, heldOut, parameters),
    };
  };
  const folds: [FoldOutcome, FoldOutcome] = [fold(0), fold(1)];
  const wholeSet = bestParameters(task, queries);
  const gain = (outcome: FoldOutcome) => objective(task.kind, outcome.heldOutTuned) - objective(task.kind, outcome.heldOutPlain);
  return {
    objective: task.kind === 'beir' ? 'nDCG@10' : 'MRR',
    folds,
    meanHeldOutGain: (gain(folds[0]) + gain(folds[1])) / 2,
    wholeSet: { parameters: wholeSet.parameters, objective: objective(task.kind, wholeSet.metrics), objectivePlain: objective(task.kind, metricsWith(task, queries, DEFAULT_RRF)) },
    // A query of half h is held out from the fold tuned on the other half.
    parametersFor: (query) => folds[foldOf(query) === 0 ? 1 : 0].chosen,
  };
}
