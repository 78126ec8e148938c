import { describe, expect, it } from 'vitest';
import { qdrantIdf, SparseIndex } from '../../src/sparse/sparse-index.ts';

/**
 * Qdrant's IDF for `modifier: "idf"` (lib/segment/src/data_types/query_context.rs, `fancy_idf`):
 * ln((N - n + 0.5) / (n + 0.5) + 1), N = vectors in the collection, n = vectors holding the index.
 * Worked out by hand here, not with the code's formula, so that a wrong formula cannot agree with itself:
 */
/** N = 3, n = 1: ln((3 - 1 + 0.5) / (1 + 0.5) + 1) = ln(2.5 / 1.5 + 1) = ln(8/3) */
const IDF_3_1 = 0.9808292530117263;
/** N = 3, n = 2: ln((3 - 2 + 0.5) / (2 + 0.5) + 1) = ln(1.5 / 2.5 + 1) = ln(1.6) */
const IDF_3_2 = 0.47000362924573563;
/** N = 3, n = 3: ln((3 - 3 + 0.5) / (3 + 0.5) + 1) = ln(0.5 / 3.5 + 1) = ln(8/7); positive, unlike Robertson's ln((N - n + 0.5) / (n + 0.5)) */
const IDF_3_3 = 0.13353139262452257;
/** N = 2, n = 1: ln((2 - 1 + 0.5) / (1 + 0.5) + 1) = ln(1 + 1) = ln 2 */
const IDF_2_1 = 0.6931471805599453;

function tinyCollection(): SparseIndex {
  const index = new SparseIndex();
  index.upsert('a', { indices: [1, 2], values: [1.5, 0.5] });
  index.upsert('b', { indices: [2, 3], values: [1.0, 2.0] });
  index.upsert('c', { indices: [3], values: [1.0] });
  return index;
}

describe('qdrantIdf', () => {
  it('is Qdrant fancy_idf: ln((N - n + 0.5) / (n + 0.5) + 1)', () => {
    expect(qdrantIdf(3, 1)).toBeCloseTo(IDF_3_1, 12);
    expect(qdrantIdf(3, 2)).toBeCloseTo(IDF_3_2, 12);
    expect(qdrantIdf(3, 3)).toBeCloseTo(IDF_3_3, 12);
    expect(qdrantIdf(2, 1)).toBeCloseTo(IDF_2_1, 12);
  });
});

describe('SparseIndex scores like Qdrant with modifier idf', () => {
  it('sums query value × idf × document value over shared indices', () => {
    const hits = tinyCollection().search({ indices: [2, 3], values: [1, 1] }, 10);
    // N = 3; index 2 is in a, b (n = 2); index 3 is in b, c (n = 2).
    // b: 1.0 × ln(1.6) + 2.0 × ln(1.6) = 3 × 0.47000362924573563; c: 1.0 × ln(1.6); a: 0.5 × ln(1.6).
    expect(hits.map((h) => h.id)).toEqual(['b', 'c', 'a']);
    expect(hits[0]!.score).toBeCloseTo(1.4100108877372068, 12);
    expect(hits[1]!.score).toBeCloseTo(IDF_3_2, 12);
    expect(hits[2]!.score).toBeCloseTo(0.23500181462286782, 12);
  });

  it('weights by the query value and returns only documents sharing an index', () => {
    const hits = tinyCollection().search({ indices: [1, 99], values: [2, 1] }, 10);
    // a: query 2 × ln(8/3) × document 1.5 = 3 × 0.9808292530117263
    expect(hits).toEqual([{ id: 'a', score: expect.closeTo(2.9424877590351786, 12) }]);
  });

  it('keeps the best `limit`, best first, ties by id', () => {
    const index = new SparseIndex();
    for (const id of ['d', 'b', 'a', 'c']) index.upsert(id, { indices: [7], values: [1] });
    index.upsert('e', { indices: [7], values: [2] });
    expect(index.search({ indices: [7], values: [1] }, 3).map((h) => h.id)).toEqual(['e', 'a', 'b']);
  });

  it('updates N and n when a document is deleted', () => {
    const index = tinyCollection();
    index.delete('c');
    expect(index.size).toBe(2);
    const hits = index.search({ indices: [3], values: [1] }, 10);
    // N = 2 and n = 1 now: b scores 1 × ln 2 × 2.0
    expect(hits).toEqual([{ id: 'b', score: expect.closeTo(1.3862943611198906, 12) }]);
  });

  it('replaces the vector of an id on upsert, updating n and keeping N', () => {
    const index = tinyCollection();
    index.upsert('a', { indices: [3], values: [4.0] });
    expect(index.size).toBe(3);
    expect(index.search({ indices: [1], values: [1] }, 10)).toEqual([]);
    const hits = index.search({ indices: [3], values: [1] }, 10);
    expect(hits.map((h) => h.id)).toEqual(['a', 'b', 'c']);
    // N = 3, n = 3: a scores 1 × ln(8/7) × 4.0
    expect(hits[0]!.score).toBeCloseTo(0.5341255704980903, 12);
  });

  it('returns nothing for an empty query, an empty index or a zero limit', () => {
    expect(tinyCollection().search({ indices: [], values: [] }, 10)).toEqual([]);
    expect(new SparseIndex().search({ indices: [1], values: [1] }, 10)).toEqual([]);
    expect(tinyCollection().search({ indices: [2], values: [1] }, 0)).toEqual([]);
  });

  it('rejects a vector whose indices and values differ in length', () => {
    expect(() => new SparseIndex().upsert('x', { indices: [1, 2], values: [1] })).toThrow(/x/);
  });
});
