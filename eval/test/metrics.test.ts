import { describe, expect, it } from 'vitest';
import { auroc, countBelow, firstHitRank, isHit, ndcgAtK, rankMetrics, recallAtK, sourceMatches } from '../src/metrics.ts';

describe('hits', () => {
  it('matches a source by path suffix at a folder boundary', () => {
    expect(sourceMatches('docs/x.md', 'docs/x.md')).toBe(true);
    expect(sourceMatches('gs://bucket/docs/x.md', 'docs/x.md')).toBe(true);
    expect(sourceMatches('mydocs/x.md', 'docs/x.md')).toBe(false);
    expect(sourceMatches('docs/x.md', 'gs://bucket/docs/x.md')).toBe(false);
  });

  it('needs the expected substring, case-insensitively, when one is given', () => {
    const passage = { source: 'docs/a.md', text: 'docs/a.md > A\n\nRetried with Jittered Backoff.' };
    expect(isHit(passage, { expectedSource: 'docs/a.md', expectedSubstring: 'jittered backoff' })).toBe(true);
    expect(isHit(passage, { expectedSource: 'docs/a.md', expectedSubstring: 'exponential' })).toBe(false);
    expect(isHit(passage, { expectedSource: 'docs/b.md' })).toBe(false);
  });

  it('gives the 1-based rank of the first hit', () => {
    const passages = [
      { source: 'a.md', text: 'one' },
      { source: 'b.md', text: 'two' },
      { source: 'b.md', text: 'three' },
    ];
    expect(firstHitRank(passages, { expectedSource: 'b.md' })).toBe(2);
    expect(firstHitRank(passages, { expectedSource: 'b.md', expectedSubstring: 'three' })).toBe(3);
    expect(firstHitRank(passages, { expectedSource: 'c.md' })).toBeUndefined();
  });
});

describe('rank metrics', () => {
  it('computes hit@1, hit@5 and MRR by hand', () => {
    // ranks 1, 2, 6, miss: hit@1 = 1/4, hit@5 = 2/4, MRR = (1 + 1/2 + 1/6 + 0) / 4 = 5/12
    const metrics = rankMetrics([1, 2, 6, undefined]);
    expect(metrics.hitAt1).toBe(0.25);
    expect(metrics.hitAt5).toBe(0.5);
    expect(metrics.mrr).toBeCloseTo(5 / 12, 12);
  });

  it('is all zeros for no questions', () => {
    expect(rankMetrics([])).toEqual({ questions: 0, hitAt1: 0, hitAt5: 0, mrr: 0 });
  });
});

describe('AUROC', () => {
  it('is 1 for perfect separation, 0 for inverted, 0.5 for ties', () => {
    expect(auroc([3, 4], [1, 2])).toBe(1);
    expect(auroc([1, 2], [3, 4])).toBe(0);
    expect(auroc([2, 2], [2])).toBe(0.5);
  });

  it('counts pairs: in-scope [0.9, 0.4, 0.7] vs out-of-scope [0.5, 0.1]', () => {
    // pairs won: 0.9 beats both (2), 0.4 beats 0.1 (1), 0.7 beats both (2) → 5 of 6
    expect(auroc([0.9, 0.4, 0.7], [0.5, 0.1])).toBeCloseTo(5 / 6, 12);
  });

  it('is undefined without one of the classes', () => {
    expect(auroc([1], [])).toBeUndefined();
  });

  it('counts what a threshold refuses as the Answerer does (score >= threshold passes)', () => {
    expect(countBelow([0.2, 0.5, 0.8], 0.5)).toBe(1);
  });
});

describe('BEIR metrics on a hand-computed qrels', () => {
  const qrels = new Map([
    ['d1', 1],
    ['d3', 2],
    ['d9', 1],
    ['d0', 0],
  ]);
  const ranked = ['d3', 'd2', 'd1', 'd0'];

  it('nDCG@10 with linear gains', () => {
    // DCG = 2/log2(2) + 0 + 1/log2(4) + 0 = 2.5; IDCG = 2/1 + 1/log2(3) + 1/log2(4) = 2.5 + 1/log2(3)
    const ideal = 2 + 1 / Math.log2(3) + 0.5;
    expect(ndcgAtK(ranked, qrels, 10)).toBeCloseTo(2.5 / ideal, 12);
  });

  it('nDCG@k cuts both the ranking and the ideal at k', () => {
    // k = 1: DCG = 2, IDCG = 2
    expect(ndcgAtK(ranked, qrels, 1)).toBe(1);
    expect(ndcgAtK(['d2', 'd3'], qrels, 1)).toBe(0);
  });

  it('Recall@k over documents with a positive grade', () => {
    expect(recallAtK(ranked, qrels, 100)).toBeCloseTo(2 / 3, 12);
    expect(recallAtK(ranked, qrels, 1)).toBeCloseTo(1 / 3, 12);
  });
});
