/**
 * The search over an index whose near-duplicates were clustered (SparseIndex.clusterNearDuplicates): families
 * of near-identical vectors (copies that each add an index of their own, or change one weight) are grouped,
 * and a search scores one member of a group for every member when the query holds no index they differ on.
 * Against an exhaustive reference, with the clustering at random points among upserts, replacements, deletes,
 * compactions and restores from sections; queries mix the families' shared indices with the ones copies differ on.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SparseIndex, type SparseMatch } from '../../src/sparse/sparse-index.ts';
import { minHashKey, nearDuplicateOrder, splitGroups } from '../../src/sparse/near-duplicate-order.ts';
import type { SparseVector } from '../../src/domain.ts';

/** ln((N - n + 0.5) / (n + 0.5) + 1), Qdrant's fancy_idf, written out again here. */
function idf(documentCount: number, documentFrequency: number): number {
  return Math.log((documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5) + 1);
}

function exhaustiveSearch(corpus: ReadonlyMap<string, SparseVector>, query: SparseVector, k: number, isVisible: (id: string) => boolean): SparseMatch[] {
  const documentFrequency = (index: number) => [...corpus.values()].filter((vector) => vector.indices.includes(index)).length;
  const matches: SparseMatch[] = [];
  for (const [id, vector] of corpus) {
    if (!isVisible(id) || !query.indices.some((index) => vector.indices.includes(index))) continue;
    let score = 0;
    query.indices.forEach((index, i) => {
      const position = vector.indices.lastIndexOf(index);
      if (position >= 0) score += query.values[i]! * idf(corpus.size, documentFrequency(index)) * Math.fround(vector.values[position]!);
    });
    matches.push({ id, score });
  }
  matches.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  return matches.slice(0, k);
}

/** Shared indices 0..59 (many, so each is rare enough to name a family); a copy's own index is 1000 + its number. */
const weight = fc.oneof(fc.constantFrom(0.5, 1, 2), fc.integer({ min: 1, max: 40 }).map((tenths) => tenths / 10));
const original = fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 59 }), weight), { minLength: 4, maxLength: 10, selector: ([index]) => index });
const family = fc.record({
  original,
  copies: fc.integer({ min: 1, max: 8 }),
  /** How copy c differs: its own index (a folder in its path), a changed weight on one shared index, or nothing. */
  variation: fc.constantFrom('own-index', 'changed-weight', 'identical'),
});

function copyOf(entries: ReadonlyArray<readonly [number, number]>, variation: string, copy: number): SparseVector {
  const indices = entries.map(([index]) => index);
  const values = entries.map(([, value]) => value);
  if (variation === 'own-index') {
    indices.push(1000 + copy);
    values.push(1.5);
  } else if (variation === 'changed-weight') {
    values[copy % values.length] = values[copy % values.length]! + copy;
  }
  return { indices, values };
}

const step = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('cluster' as const) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('restore' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), vector: original }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('search' as const),
      shared: fc.uniqueArray(fc.integer({ min: 0, max: 59 }), { minLength: 1, maxLength: 6 }),
      own: fc.array(fc.integer({ min: 1, max: 8 }), { maxLength: 2 }),
      k: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 6, max: 40 })),
      hiddenRemainder: fc.constantFrom(-1, 0, 1),
    }),
    weight: 4,
  },
);

describe('SparseIndex search over clustered near-duplicates', () => {
  it('returns the same top k, ties by id, and scores as exhaustive scoring', () => {
    fc.assert(
      fc.property(fc.array(family, { minLength: 1, maxLength: 6 }), fc.array(step, { maxLength: 30 }), fc.integer({ min: 1, max: 96 }), fc.integer({ min: 1, max: 6 }), (families, steps, idOrder, minGarbageToCompact) => {
        let index = new SparseIndex(minGarbageToCompact);
        const corpus = new Map<string, SparseVector>();
        // Copy-major insertion, as a corpus copied into folders is ingested: a family's copies lie far apart.
        for (let copy = 1; copy <= 8; copy++) {
          families.forEach(({ original: entries, copies, variation }, position) => {
            if (copy > copies) return;
            const id = `doc-${((copy * 7 + position) * idOrder) % 97}-${copy}-${position}`;
            const vector = copyOf(entries, variation, copy);
            index.upsert(id, vector);
            corpus.set(id, vector);
          });
        }
        index.clusterNearDuplicates();
        for (const action of steps) {
          const ids = [...corpus.keys()];
          if (action.kind === 'cluster') index.clusterNearDuplicates();
          else if (action.kind === 'restore') index = SparseIndex.fromSections(index.toSections(), minGarbageToCompact);
          else if (action.kind === 'delete' && ids.length > 0) {
            const id = ids[action.pick % ids.length]!;
            index.delete(id);
            corpus.delete(id);
          } else if (action.kind === 'replace' && ids.length > 0) {
            const id = ids[action.pick % ids.length]!;
            const vector = { indices: action.vector.map(([i]) => i), values: action.vector.map(([, v]) => v) };
            index.upsert(id, vector);
            corpus.set(id, vector);
          } else if (action.kind === 'search') {
            const indices = [...action.shared, ...action.own.map((copy) => 1000 + copy)];
            const query = { indices, values: indices.map(() => 1) };
            const isVisible = (id: string) => id.length % 2 !== action.hiddenRemainder;
            expect(index.size).toBe(corpus.size);
            expect(index.search(query, action.k, isVisible)).toEqual(exhaustiveSearch(corpus, query, action.k, isVisible));
            expect(index.search(query, action.k)).toEqual(exhaustiveSearch(corpus, query, action.k, () => true));
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('groups copies that differ by one index each, and scores them alike when the query holds none of those', () => {
    const index = new SparseIndex();
    // 40 shared indices and one of its own per copy: a copy's own index rarely sits in its sketch (near-duplicate-order.ts).
    const shared = { indices: Array.from({ length: 40 }, (_, i) => 3 * i), values: Array.from({ length: 40 }, (_, i) => 1 + (i % 4) / 2) };
    for (let copy = 1; copy <= 22; copy++) {
      index.upsert(`copy-${copy}`, { indices: [...shared.indices, 1000 + copy], values: [...shared.values, 1] });
      index.upsert(`other-${copy}`, { indices: [500 + copy, 600 + copy, 700 + copy], values: [1, 1, 1] });
    }
    index.clusterNearDuplicates();
    expect(index.nearDuplicateGroupCount).toBeGreaterThanOrEqual(1);
    expect(index.nearDuplicateGroupedDocuments).toBeGreaterThanOrEqual(18);
    const matches = index.search({ indices: [9, 81], values: [1, 1] }, 30);
    expect(matches).toHaveLength(22);
    expect(new Set(matches.map(({ score }) => score)).size).toBe(1);
    // A query holding copy 5's own index ranks copy 5 first: the group is scored member by member.
    expect(index.search({ indices: [9, 1005], values: [1, 1] }, 3)[0]!.id).toBe('copy-5');
    // The groups travel with the sections a saved search view holds.
    const restored = SparseIndex.fromSections(index.toSections());
    expect([restored.nearDuplicateGroupCount, restored.nearDuplicateGroupedDocuments]).toEqual([index.nearDuplicateGroupCount, index.nearDuplicateGroupedDocuments]);
  });
});

describe('which documents share a near-duplicate group', () => {
  /** Group of each document after clustering, from the sections a saved view holds (-1: in no group). */
  function groupsOf(index: SparseIndex): Map<string, number> {
    const { ids, groupOfSlot } = index.toSections();
    return new Map(ids.map((id, slot) => [id, groupOfSlot![slot]!]));
  }

  it('joins documents that differ in at most 8 indices, and not one that differs in 9', () => {
    const indices = Array.from({ length: 40 }, (_, i) => 3 * i);
    const withWeights = (changed: readonly number[], by: number): SparseVector => ({ indices, values: indices.map((_, i) => (changed.includes(i) ? 1 + by : 1)) });
    const index = new SparseIndex();
    // The same indices everywhere, so every one of them shares a sketch (near-duplicate-order.ts): the vectors decide.
    index.upsert('original', withWeights([], 0));
    index.upsert('eight-changed', withWeights([0, 1, 2, 3, 4, 5, 6, 7], 1));
    index.upsert('three-of-those', withWeights([0, 1, 2], 1));
    index.upsert('nine-others-changed', withWeights([20, 21, 22, 23, 24, 25, 26, 27, 28], 1));
    index.upsert('unrelated', { indices: [500, 501, 502, 503], values: [1, 1, 1, 1] });
    index.clusterNearDuplicates();
    const groups = groupsOf(index);
    const family = groups.get('original')!;
    expect(family).toBeGreaterThanOrEqual(0);
    expect([groups.get('eight-changed'), groups.get('three-of-those')]).toEqual([family, family]);
    expect(groups.get('nine-others-changed')).not.toBe(family);
    expect(groups.get('unrelated')).not.toBe(family);
    expect(index.nearDuplicateGroupedDocuments).toBe(3);
  });
});

describe('nearDuplicateOrder', () => {
  it('moves each group to its first member and keeps every other slot in place', () => {
    const keys = ['a', 'b', 'c', 'a', 'd', 'b', 'a'];
    const { order, groupStarts } = nearDuplicateOrder(Int32Array.from(keys.keys()), (slot) => keys[slot]!);
    expect([...order]).toEqual([0, 3, 6, 1, 5, 2, 4]);
    expect([...groupStarts]).toEqual([0, 3, 5, 6, 7]);
  });
});

describe('splitGroups', () => {
  it('splits a sketch group into runs of documents near its first member, in order', () => {
    // Slots 0, 2, 5 are one page's versions, 3 and 4 another's; 1 shares the sketch alone.
    const page = (slot: number) => ({ 0: 'a', 2: 'a', 5: 'a', 3: 'b', 4: 'b', 1: 'c', 6: 'd' })[slot];
    const sketched = { order: Int32Array.from([0, 3, 2, 4, 1, 5, 6]), groupStarts: Int32Array.from([0, 6, 7]) };
    const { order, groupStarts } = splitGroups(sketched, (representative, slot) => page(representative) === page(slot));
    expect([...order]).toEqual([0, 2, 5, 3, 4, 1, 6]);
    expect([...groupStarts]).toEqual([0, 3, 5, 6, 7]);
  });
});

describe('minHashKey', () => {
  const rare = (index: number) => index >= 100;
  it('is the same for sets that differ only in common indices', () => {
    expect(minHashKey([100, 101, 102, 103, 1, 2], (index) => !rare(index))).toBe(minHashKey([103, 102, 101, 100, 7], (index) => !rare(index)));
  });
  it('does not depend on the order of the indices', () => {
    const indices = Array.from({ length: 40 }, (_, i) => 7919 * (i + 1));
    const rotated = (by: number) => [...indices.slice(by), ...indices.slice(0, by)];
    const keys = new Set([indices, [...indices].reverse(), rotated(13), rotated(29)].map((order) => minHashKey(order, () => false)));
    expect(keys.size).toBe(1);
  });
  it('differs for sets of other rare indices', () => {
    expect(minHashKey([100, 101, 102, 103], () => false)).not.toBe(minHashKey([200, 201, 202, 203], () => false));
  });
});
