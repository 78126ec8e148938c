import { fuseHybrid, type RrfParameters } from '@rag/core';
import { describe, expect, it } from 'vitest';
import type { EvalPassage } from '../src/backend.ts';
import { bestParameters, fusionGrid, tuneFusion, type LegsOfQuery } from '../src/fusion-tuning.ts';
import { foldOf, type JudgedQuery, type RetrievalTask } from '../src/retrieval-task.ts';

/**
 * Synthetic legs: each query's dense leg ranks `dense` first, its sparse leg ranks `sparse` first. With plain
 * RRF both score 1/2 and the tie goes to the smaller id, which these ids make the wrong one (rank 2, MRR 0.5).
 */
function query(text: string, favours: 'dense' | 'sparse'): LegsOfQuery {
  const dense = favours === 'dense' ? 'z-dense' : 'a-dense';
  const sparse = favours === 'dense' ? 'a-sparse' : 'z-sparse';
  const expected = favours === 'dense' ? dense : sparse;
  const judged: JudgedQuery = {
    id: text,
    text,
    judge: (passages) => {
      const index = passages.findIndex((passage) => passage.source === expected);
      return { rank: index === -1 ? undefined : index + 1 };
    },
  };
  const fused = (parameters: RrfParameters): EvalPassage[] =>
    fuseHybrid([dense, 'filler-d'], [sparse, 'filler-s'], parameters).map(({ id, score }) => ({ source: id, headingPath: '', chunkIndex: 0, text: id, score }));
  return { query: judged, legs: { fused } };
}

const task = (queries: LegsOfQuery[]): RetrievalTask => ({ name: 'synthetic', kind: 'golden', depth: 10, queries: queries.map((entry) => entry.query) });

/** Question texts that fall in each half, found by trying numbered texts. */
function textsInHalf(half: 0 | 1, count: number): string[] {
  const texts: string[] = [];
  for (let n = 0; texts.length < count; n++) if (foldOf({ text: `question ${n}` }) === half) texts.push(`question ${n}`);
  return texts;
}

describe('fusion tuning', () => {
  it('tries plain RRF first, then 44 other points, each once', () => {
    const grid = fusionGrid();
    expect(grid[0]).toEqual({ k: 2, weights: { dense: 1, sparse: 1 } });
    expect(grid).toHaveLength(45);
    expect(new Set(grid.map((point) => JSON.stringify(point))).size).toBe(45);
  });

  it('splits by the text, not the position: a question keeps its half', () => {
    expect(foldOf({ text: 'How do I rotate keys?' })).toBe(foldOf({ text: 'How do I rotate keys?' }));
    const halves = [0, 0];
    for (let n = 0; n < 200; n++) halves[foldOf({ text: `question ${n}` })]! += 1;
    expect(halves[0]).toBeGreaterThan(70);
    expect(halves[1]).toBeGreaterThan(70);
  });

  it('leans on the leg that finds the answers, and keeps the gain on held-out questions', () => {
    const queries = [...textsInHalf(0, 6), ...textsInHalf(1, 6)].map((text) => query(text, 'dense'));
    const outcome = tuneFusion(task(queries), queries);
    for (const fold of outcome.folds) {
      expect(fold.chosen.weights.dense).toBeGreaterThan(fold.chosen.weights.sparse);
      expect(fold.heldOutPlain.mrr).toBe(0.5);
      expect(fold.heldOutTuned.mrr).toBe(1);
    }
    expect(outcome.meanHeldOutGain).toBe(0.5);
  });

  it('judges each half with what the other half chose: no peeking at the questions it is judged on', () => {
    // Half 0 is answered by the dense leg, half 1 by the sparse leg: what one half teaches fails the other.
    const queries = [...textsInHalf(0, 6).map((text) => query(text, 'dense')), ...textsInHalf(1, 6).map((text) => query(text, 'sparse'))];
    const outcome = tuneFusion(task(queries), queries);
    const [tunedOnDenseHalf, tunedOnSparseHalf] = outcome.folds;
    expect(tunedOnDenseHalf.tunedOn).toBe(0);
    expect(tunedOnDenseHalf.chosen.weights.dense).toBeGreaterThan(tunedOnDenseHalf.chosen.weights.sparse);
    expect(tunedOnDenseHalf.tuningObjective).toBe(1);
    // Judged on the sparse half, the dense-leaning choice does no better than plain RRF (it would score 1 on its own half).
    expect(tunedOnDenseHalf.heldOutPlain.mrr).toBe(0.5);
    expect(tunedOnDenseHalf.heldOutTuned.mrr).toBeLessThanOrEqual(0.5);
    expect(tunedOnSparseHalf.chosen.weights.sparse).toBeGreaterThan(tunedOnSparseHalf.chosen.weights.dense);
    expect(tunedOnSparseHalf.tuningObjective).toBe(1);
    expect(tunedOnSparseHalf.heldOutTuned.mrr).toBeLessThanOrEqual(0.5);
    expect(outcome.meanHeldOutGain).toBeLessThanOrEqual(0);
    // The cross-fitted mode answers a half-1 question with half 0's choice, and the other way round.
    expect(outcome.parametersFor(queries[queries.length - 1]!.query)).toEqual(tunedOnDenseHalf.chosen);
    expect(outcome.parametersFor(queries[0]!.query)).toEqual(tunedOnSparseHalf.chosen);
  });

  it('keeps plain RRF when nothing does strictly better', () => {
    // Both legs agree: every grid point ranks the answer first.
    const agreeing: LegsOfQuery[] = textsInHalf(0, 4).map((text) => ({
      query: { id: text, text, judge: (passages) => ({ rank: passages[0]?.source === 'answer' ? 1 : undefined }) },
      legs: { fused: (parameters) => fuseHybrid(['answer', 'x'], ['answer', 'y'], parameters).map(({ id, score }) => ({ source: id, headingPath: '', chunkIndex: 0, text: id, score })) },
    }));
    expect(bestParameters(task(agreeing), agreeing).parameters).toEqual({ k: 2, weights: { dense: 1, sparse: 1 } });
  });
});
