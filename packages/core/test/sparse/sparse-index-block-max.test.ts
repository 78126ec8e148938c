/**
 * Block-max pruning (posting-list.ts's per-block bounds, sparse-index.ts's block windows) on lists long
 * enough to hold several blocks, which the other pruning tests' small corpora never reach:
 * - every block's bounds hold each weight stored in it, through appends (the same slot twice included),
 *   loads from sorted arrays, compactions and renumberings;
 * - the search equals exhaustive scoring (written here again): the same top k, scores and ties by id, with
 *   chunks hidden from the caller, deletions, clustering and a round trip through the saved sections.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BLOCK_SIZE, PostingList } from '../../src/sparse/posting-list.ts';
import { SparseIndex, type SparseMatch } from '../../src/sparse/sparse-index.ts';
import type { SparseVector } from '../../src/domain.ts';

/** Mostly small weights with rare large ones, so a few blocks hold a list's maximum; ties and negatives too. */
const weight = fc.oneof(
  { arbitrary: fc.constantFrom(0.25, 0.5, 1), weight: 60 },
  { arbitrary: fc.double({ min: 0, max: 1.5, noNaN: true }), weight: 30 },
  { arbitrary: fc.constantFrom(4, 8), weight: 2 },
  { arbitrary: fc.constantFrom(0, -1, -0.5), weight: 8 },
);
/**
 * Few indices, so lists get a few hundred postings: several blocks of BLOCK_SIZE. Two common indices and
 * rarer ones, so the lists of one query end their blocks at different slots (a block window is the shortest).
 */
const sparseIndex = fc.oneof({ arbitrary: fc.constantFrom(0, 1), weight: 4 }, { arbitrary: fc.integer({ min: 2, max: 7 }), weight: 2 });
const vector = fc
  .array(fc.tuple(sparseIndex, weight), { minLength: 1, maxLength: 4 })
  .map((entries): SparseVector => ({ indices: entries.map(([index]) => index), values: entries.map(([, value]) => value) }));

function expectBoundsHold(list: PostingList): void {
  for (let i = 0; i < list.length; i++) {
    const block = Math.floor(i / BLOCK_SIZE);
    expect(list.blockMax[block]).toBeGreaterThanOrEqual(list.weights[i]!);
    expect(list.blockMin[block]).toBeLessThanOrEqual(list.weights[i]!);
    expect(list.maxWeight).toBeGreaterThanOrEqual(list.weights[i]!);
    expect(list.minWeight).toBeLessThanOrEqual(list.weights[i]!);
  }
}

describe('PostingList block bounds', () => {
  it('hold every weight of their block through appends, loads, compactions and renumberings', () => {
    const appends = fc.array(fc.tuple(fc.constantFrom(0, 1, 1, 1, 2), weight), { minLength: 1, maxLength: 400 });
    fc.assert(
      fc.property(appends, fc.integer({ min: 2, max: 7 }), fc.integer({ min: 1, max: 1000 }), (steps, deleteEvery, shuffle) => {
        const list = new PostingList();
        let slot = 0;
        // A step of 0 writes the last slot again (its weight replaced), as an upsert of the same document does.
        for (const [gap, value] of steps) list.append((slot += gap), value);
        expectBoundsHold(list);
        expectBoundsHold(PostingList.fromSorted(list.slots.slice(0, list.length), list.weights.slice(0, list.length)));

        const slotCount = slot + 1;
        const isDeleted = Uint8Array.from({ length: slotCount }, (_, s) => (s % deleteEvery === 0 ? 1 : 0));
        const keptSlotOf = new Int32Array(slotCount);
        let kept = 0;
        for (let s = 0; s < slotCount; s++) if (isDeleted[s] === 0) keptSlotOf[s] = kept++;
        list.compact(isDeleted, keptSlotOf);
        expectBoundsHold(list);

        // Renumbered through a permutation (what clustering does), then appended to again.
        const order = Array.from({ length: kept }, (_, s) => s).sort((a, b) => ((a * shuffle) % 1009) - ((b * shuffle) % 1009) || a - b);
        const newSlotOf = new Int32Array(kept);
        order.forEach((old, position) => (newSlotOf[old] = position));
        list.renumber(newSlotOf, new Uint8Array(kept).fill(1), new Float64Array(list.length));
        expectBoundsHold(list);
        for (const [gap, value] of steps.slice(0, 80)) list.append((slot += gap + kept), value);
        expectBoundsHold(list);
      }),
      { numRuns: 300 },
    );
  });
});

/** ln((N - n + 0.5) / (n + 0.5) + 1), Qdrant's fancy_idf, written out again so the two cannot share a slip. */
function idf(documentCount: number, documentFrequency: number): number {
  return Math.log((documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5) + 1);
}

/** Every visible document holding a query index, scored in query order (the last value of a repeated index counts). */
function exhaustiveSearch(corpus: Map<string, SparseVector>, query: SparseVector, k: number, isVisible: (id: string) => boolean): SparseMatch[] {
  const documentFrequency = new Map<number, number>();
  for (const vector of corpus.values()) for (const index of new Set(vector.indices)) documentFrequency.set(index, (documentFrequency.get(index) ?? 0) + 1);
  const matches: SparseMatch[] = [];
  for (const [id, vector] of corpus) {
    if (!isVisible(id) || !query.indices.some((index) => vector.indices.includes(index))) continue;
    let score = 0;
    query.indices.forEach((index, i) => {
      const position = vector.indices.lastIndexOf(index);
      if (position >= 0) score += query.values[i]! * idf(corpus.size, documentFrequency.get(index)!) * Math.fround(vector.values[position]!);
    });
    matches.push({ id, score });
  }
  matches.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  return matches.slice(0, k);
}

describe('SparseIndex search with block bounds', () => {
  const searchCase = fc.record({
    vectors: fc.array(vector, { minLength: BLOCK_SIZE + 1, maxLength: 5 * BLOCK_SIZE }),
    query: vector,
    k: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 6, max: 40 })),
    idOrder: fc.integer({ min: 1, max: 1000 }),
    hiddenEvery: fc.constantFrom(0, 2, 3),
    deleteEvery: fc.constantFrom(0, 4, 7),
    prepared: fc.constantFrom('as-upserted', 'clustered', 'restored'),
  });

  it('returns the same top k, scores and ties by id as exhaustive scoring', () => {
    fc.assert(
      fc.property(searchCase, ({ vectors, query, k, idOrder, hiddenEvery, deleteEvery, prepared }) => {
        let index = new SparseIndex(8);
        const corpus = new Map<string, SparseVector>();
        vectors.forEach((vector, position) => {
          // A multiplier coprime with 1009 spreads ids so that their string order differs from slot order.
          const id = `chunk-${((position + 1) * idOrder) % 1009}`;
          index.upsert(id, vector);
          corpus.set(id, vector);
        });
        if (deleteEvery > 0) {
          [...corpus.keys()].forEach((id, position) => {
            if (position % deleteEvery !== 0) return;
            index.delete(id);
            corpus.delete(id);
          });
        }
        if (prepared === 'clustered') index.clusterNearDuplicates();
        if (prepared === 'restored') index = SparseIndex.fromSections(index.toSections());
        const isVisible = (id: string) => hiddenEvery === 0 || Number(id.slice('chunk-'.length)) % hiddenEvery !== 0;
        expect(index.search(query, k, isVisible)).toEqual(exhaustiveSearch(corpus, query, k, isVisible));
        expect(index.search(query, k)).toEqual(exhaustiveSearch(corpus, query, k, () => true));
      }),
      { numRuns: 300 },
    );
  });
});
