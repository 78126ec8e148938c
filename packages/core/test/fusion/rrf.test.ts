import { describe, expect, it } from 'vitest';
import { QDRANT_RRF_K, reciprocalRankFusion } from '../../src/fusion/rrf.ts';

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
