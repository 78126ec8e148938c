import { describe, expect, it } from 'vitest';
import { qdrantIdf, SparseIndex } from '../../src/sparse/sparse-index.ts';

const idf = (n: number, df: number): number => Math.log((n - df + 0.5) / (df + 0.5) + 1);

function tinyCollection(): SparseIndex {
  const index = new SparseIndex();
  index.upsert('a', { indices: [1, 2], values: [1.5, 0.5] });
  index.upsert('b', { indices: [2, 3], values: [1.0, 2.0] });
  index.upsert('c', { indices: [3], values: [1.0] });
  return index;
}

describe('qdrantIdf', () => {
  it('is Qdrant fancy_idf: ln((N - n + 0.5) / (n + 0.5) + 1)', () => {
    expect(qdrantIdf(3, 1)).toBeCloseTo(Math.log(2.5 / 1.5 + 1), 12);
    expect(qdrantIdf(3, 3)).toBeCloseTo(Math.log(0.5 / 3.5 + 1), 12);
    expect(qdrantIdf(3, 3)).toBeGreaterThan(0);
  });
});

describe('SparseIndex scores like Qdrant with modifier idf', () => {
  it('sums query value × idf × document value over shared indices', () => {
    const hits = tinyCollection().search({ indices: [2, 3], values: [1, 1] }, 10);
    // N = 3; index 2 is in a, b (n = 2); index 3 is in b, c (n = 2).
    expect(hits.map((h) => h.id)).toEqual(['b', 'c', 'a']);
    expect(hits[0]!.score).toBeCloseTo(1.0 * idf(3, 2) + 2.0 * idf(3, 2), 12);
    expect(hits[1]!.score).toBeCloseTo(1.0 * idf(3, 2), 12);
    expect(hits[2]!.score).toBeCloseTo(0.5 * idf(3, 2), 12);
  });

  it('weights by the query value and returns only documents sharing an index', () => {
    const hits = tinyCollection().search({ indices: [1, 99], values: [2, 1] }, 10);
    expect(hits).toEqual([{ id: 'a', score: 2 * 1.5 * idf(3, 1) }]);
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
    expect(hits).toEqual([{ id: 'b', score: 2.0 * idf(2, 1) }]);
  });

  it('replaces the vector of an id on upsert, updating n and keeping N', () => {
    const index = tinyCollection();
    index.upsert('a', { indices: [3], values: [4.0] });
    expect(index.size).toBe(3);
    expect(index.search({ indices: [1], values: [1] }, 10)).toEqual([]);
    const hits = index.search({ indices: [3], values: [1] }, 10);
    expect(hits.map((h) => h.id)).toEqual(['a', 'b', 'c']);
    expect(hits[0]!.score).toBeCloseTo(4.0 * idf(3, 3), 12);
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
