import { describe, expect, it } from 'vitest';
import { fuseHybrid, isPlainRrf, parseFusionWeights, QDRANT_RRF_K, reciprocalRankFusion } from '../../src/fusion/rrf.ts';

describe('reciprocalRankFusion matches Qdrant rrf_scoring', () => {
  it("reproduces Qdrant's test_rrf_scoring case, scores and order", () => {
    const fused = reciprocalRankFusion([['2', '1'], ['1', '2', '3'], ['5', '3', '1']]);
    expect(fused.map((f) => f.id)).toEqual(['1', '2', '3', '5']);
    const expected = [1.0833334, 0.8333334, 0.5833334, 0.5];
    fused.forEach((f, i) => expect(f.score).toBeCloseTo(expected[i]!, 6));
    // Accumulated in f32 like the server, so equal to its f32 values exactly.
    fused.forEach((f, i) => expect(f.score).toBe(Math.fround(expected[i]!)));
  });

  it('uses k = 2: a point first in both lists scores 1.0', () => {
    expect(QDRANT_RRF_K).toBe(2);
    expect(reciprocalRankFusion([['a'], ['a']])).toEqual([{ id: 'a', score: 1 }]);
  });

  it('accepts another k', () => {
    const [top] = reciprocalRankFusion([['a', 'b']], 60);
    expect(top!.score).toBeCloseTo(1 / 60, 7);
  });

  it('breaks ties by id ascending and handles no rankings', () => {
    expect(reciprocalRankFusion([['z', 'y'], ['y', 'z']]).map((f) => f.id)).toEqual(['y', 'z']);
    expect(reciprocalRankFusion([])).toEqual([]);
  });
});

/**
 * Weighted RRF as Qdrant ≥ 1.17 computes it: `position_score = 1 / ((position + 1) / weight + k - 1)`,
 * every step in f32, a weight ≤ 0 contributing nothing.
 * https://github.com/qdrant/qdrant/blob/master/lib/segment/src/common/reciprocal_rank_fusion.rs
 */
describe('weighted reciprocalRankFusion matches Qdrant position_score', () => {
  it('scores by hand: weights 3 and 1, k = 2', () => {
    // a: first in the weight-3 list: 1/(1/3 + 1) = 0.75; second in the weight-1 list: 1/(2 + 1) = 1/3.
    // b: second in the weight-3 list: 1/(2/3 + 1) = 0.6; first in the weight-1 list: 1/(1 + 1) = 0.5.
    // So b (1.1) passes a (1.0833): its first place in the other list outweighs a compressed second place.
    const fused = reciprocalRankFusion([['a', 'b'], ['b', 'a']], 2, [3, 1]);
    expect(fused.map((match) => match.id)).toEqual(['b', 'a']);
    expect(fused[0]!.score).toBeCloseTo(0.6 + 0.5, 6);
    expect(fused[1]!.score).toBeCloseTo(0.75 + 1 / 3, 6);
  });

  it("reproduces Qdrant's test_rrf_scoring_weighted: a 3:1 weight puts the weighted list's second point first", () => {
    // Qdrant's own test: responses [[1, 2], [2, 1]], weights [3, 1] → point 2 first, scores strictly ordered.
    const fused = reciprocalRankFusion([['1', '2'], ['2', '1']], 2, [3, 1]);
    expect(fused[0]!.id).toBe('2');
    expect(fused[0]!.score).toBeGreaterThan(fused[1]!.score);
  });

  it('keeps f32 arithmetic: 1/((0+1)/0.3 + 60 - 1) is the f32 value, not the f64 one', () => {
    const [top] = reciprocalRankFusion([['a']], 60, [0.3]);
    const f32 = Math.fround;
    expect(top!.score).toBe(f32(1 / f32(f32(f32(1 / f32(0.3)) + 60) - 1)));
    expect(top!.score).not.toBe(1 / (1 / 0.3 + 59));
  });

  it('weights of 1 are plain RRF; a weight of 0 adds nothing, as Qdrant keeps the point at score 0', () => {
    expect(reciprocalRankFusion([['x', 'y'], ['y', 'z']], 2, [1, 1])).toEqual(reciprocalRankFusion([['x', 'y'], ['y', 'z']]));
    expect(reciprocalRankFusion([['a'], ['b']], 2, [1, 0])).toEqual([
      { id: 'a', score: 0.5 },
      { id: 'b', score: 0 },
    ]);
  });

  it('refuses a weight count that does not match the rankings (Qdrant answers a validation error)', () => {
    expect(() => reciprocalRankFusion([['a'], ['b']], 2, [1, 2, 3])).toThrow(/one weight per ranking/);
  });

  it('fuseHybrid puts dense first, as the prefetches are ordered', () => {
    const fused = fuseHybrid(['d'], ['s'], { k: 2, weights: { dense: 2, sparse: 1 } });
    // d: 1/(1/2 + 1) = 2/3; s: 1/(1 + 1) = 1/2.
    expect(fused).toEqual([
      { id: 'd', score: Math.fround(2 / 3) },
      { id: 's', score: 0.5 },
    ]);
  });
});

describe('parseFusionWeights (FUSION_WEIGHTS)', () => {
  it('reads both legs in either order', () => {
    expect(parseFusionWeights('dense:2,sparse:1')).toEqual({ dense: 2, sparse: 1 });
    expect(parseFusionWeights(' sparse: 0.5 , dense:1.5')).toEqual({ dense: 1.5, sparse: 0.5 });
  });

  it('explains what it refuses', () => {
    expect(parseFusionWeights('dense:2')).toMatch(/name both legs/);
    expect(parseFusionWeights('2,1')).toMatch(/expected "dense:<weight>,sparse:<weight>"/);
    expect(parseFusionWeights('dense:-1,sparse:1')).toMatch(/expected/);
    expect(parseFusionWeights('dense:0,sparse:0')).toMatch(/above 0/);
  });

  it('isPlainRrf is true only for k = 2 with weights 1', () => {
    expect(isPlainRrf({ k: 2, weights: { dense: 1, sparse: 1 } })).toBe(true);
    expect(isPlainRrf({ k: 60, weights: { dense: 1, sparse: 1 } })).toBe(false);
    expect(isPlainRrf({ k: 2, weights: { dense: 1, sparse: 2 } })).toBe(false);
  });
});
