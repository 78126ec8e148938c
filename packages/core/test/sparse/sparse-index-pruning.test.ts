/**
 * The pruned search (MaxScore over per-term bounds, tombstones, compaction) against an exhaustive
 * reference written here: every visible document sharing an index is scored, in query order, and
 * sorted best first with equal scores by id. Random corpora with access groups, random queries and
 * k, with upserts, replacements and deletes interleaved; the top k and the scores must be identical.
 * A `restore` step replaces the index by one read back from its sections (what a saved search view
 * holds), so edits and compactions after a restore, on arrays shared with the saved buffer, are checked too.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SparseIndex, type SparseIndexSections, type SparseMatch } from '../../src/sparse/sparse-index.ts';
import type { SparseVector } from '../../src/domain.ts';

/** Ids whose order as strings differs from their order of insertion, so ties by id are exercised. */
const IDS = Array.from({ length: 40 }, (_, i) => `chunk-${(i * 7) % 40}`);
const GROUPS = ['ops', 'dev', 'hr'];

interface StoredDocument {
  vector: SparseVector;
  groups: readonly string[];
}

/** Many repeated weights (ties), a few negative and zero ones, and arbitrary doubles. */
const weight = fc.oneof(
  fc.constantFrom(0.5, 1, 2, 3),
  fc.constantFrom(0, -1),
  fc.integer({ min: -20, max: 80 }).map((tenths) => tenths / 10),
  fc.double({ min: -2, max: 8, noNaN: true }),
);
const vector = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 12 }), weight), { maxLength: 8, size: 'max' })
  .map((entries) => ({ indices: entries.map(([index]) => index), values: entries.map(([, value]) => value) }));
const groups = fc.subarray(GROUPS);

const operation = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('upsert' as const), id: fc.constantFrom(...IDS), vector, groups }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), id: fc.constantFrom(...IDS) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('restore' as const) }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant('search' as const), query: vector, k: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 12 })), callerGroups: groups }),
    weight: 2,
  },
);

/** ln((N - n + 0.5) / (n + 0.5) + 1), Qdrant's fancy_idf, written out again so the two cannot share a slip. */
function idf(documentCount: number, documentFrequency: number): number {
  return Math.log((documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5) + 1);
}

function valueOf(vector: SparseVector, index: number): number | undefined {
  const position = vector.indices.lastIndexOf(index);
  return position < 0 ? undefined : Math.fround(vector.values[position]!);
}

function exhaustiveSearch(corpus: Map<string, StoredDocument>, query: SparseVector, k: number, isVisible: (id: string) => boolean): SparseMatch[] {
  const documentFrequency = (index: number) => [...corpus.values()].filter(({ vector }) => vector.indices.includes(index)).length;
  const matches: SparseMatch[] = [];
  for (const [id, { vector }] of corpus) {
    if (!isVisible(id) || !query.indices.some((index) => vector.indices.includes(index))) continue;
    let score = 0;
    query.indices.forEach((index, i) => {
      const value = valueOf(vector, index);
      if (value !== undefined) score += query.values[i]! * idf(corpus.size, documentFrequency(index)) * value;
    });
    matches.push({ id, score });
  }
  matches.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  return matches.slice(0, Math.max(0, k));
}

/** The sections in one shared buffer, as a file read gives them, so that writes through one array could corrupt another. */
function copied(sections: SparseIndexSections): SparseIndexSections {
  const arrays = [sections.terms, sections.listStarts, sections.slots, sections.weights, sections.slotTerms, sections.slotTermStarts];
  const buffer = new ArrayBuffer(arrays.reduce((total, array) => total + array.byteLength, 0));
  let offset = 0;
  const [terms, listStarts, slots, weights, slotTerms, slotTermStarts] = arrays.map((array) => {
    const copy = new (array.constructor as new (buffer: ArrayBuffer, offset: number, length: number) => typeof array)(buffer, offset, array.length);
    copy.set(array as never);
    offset += array.byteLength;
    return copy;
  });
  return { ids: [...sections.ids], terms, listStarts, slots, weights, slotTerms, slotTermStarts } as SparseIndexSections;
}

describe('SparseIndex pruned search', () => {
  it('returns the same top k and scores as exhaustive scoring, visibility and edits included', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 150, size: 'max' }), fc.integer({ min: 1, max: 6 }), (operations, minGarbageToCompact) => {
        let index = new SparseIndex(minGarbageToCompact);
        const corpus = new Map<string, StoredDocument>();
        for (const step of operations) {
          if (step.kind === 'upsert') {
            index.upsert(step.id, step.vector);
            corpus.set(step.id, { vector: step.vector, groups: step.groups });
          } else if (step.kind === 'delete') {
            index.delete(step.id);
            corpus.delete(step.id);
          } else if (step.kind === 'restore') {
            index = SparseIndex.fromSections(copied(index.toSections()), minGarbageToCompact);
          } else {
            const isVisible = (id: string) => {
              const documentGroups = corpus.get(id)!.groups;
              return documentGroups.length === 0 || documentGroups.some((group) => step.callerGroups.includes(group));
            };
            expect(index.size).toBe(corpus.size);
            expect(index.search(step.query, step.k, isVisible)).toEqual(exhaustiveSearch(corpus, step.query, step.k, isVisible));
            expect(index.search(step.query, step.k)).toEqual(exhaustiveSearch(corpus, step.query, step.k, () => true));
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

/**
 * A collection of exact copies (what a corpus copied N times, or boilerplate repeated across documents, gives):
 * every score ties with the other copies', so the k-th best score often equals the best one, and a copy equal
 * to the threshold still enters when its id is smaller. Ids are shuffled against insertion (slot) order; searches
 * run before and after deletes, with and without some copies hidden from the caller.
 */
describe('SparseIndex pruned search over exact copies', () => {
  const copiesCase = fc.record({
    originals: fc.array(vector, { minLength: 1, maxLength: 6 }),
    copies: fc.integer({ min: 1, max: 12 }),
    deletes: fc.array(fc.nat(), { maxLength: 10 }),
    query: vector,
    k: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 60, max: 100 })),
    idOrder: fc.integer({ min: 1, max: 96 }),
    hiddenRemainder: fc.constantFrom(-1, 0, 1),
  });

  it('returns the same top k, ties by id, and scores as exhaustive scoring', () => {
    fc.assert(
      fc.property(copiesCase, ({ originals, copies, deletes, query, k, idOrder, hiddenRemainder }) => {
        // Some copies hidden from the caller (ids with an odd or even number), so a copy's siblings differ in visibility.
        const isVisible = (id: string) => Number(id.slice('copy-'.length)) % 2 !== hiddenRemainder;
        const index = new SparseIndex(2);
        const corpus = new Map<string, StoredDocument>();
        for (let copy = 0; copy < copies; copy++) {
          originals.forEach((original, position) => {
            // A multiplier coprime with 97 spreads ids so that their string order differs from insertion order.
            const id = `copy-${((copy * originals.length + position + 1) * idOrder) % 97}`;
            index.upsert(id, original);
            corpus.set(id, { vector: original, groups: [] });
          });
        }
        expect(index.search(query, k, isVisible)).toEqual(exhaustiveSearch(corpus, query, k, isVisible));
        // Then some copies deleted, and the same searches again.
        const ids = [...corpus.keys()];
        for (const pick of deletes) {
          const id = ids[pick % ids.length]!;
          index.delete(id);
          corpus.delete(id);
        }
        expect(index.search(query, k)).toEqual(exhaustiveSearch(corpus, query, k, () => true));
        expect(index.search(query, k, isVisible)).toEqual(exhaustiveSearch(corpus, query, k, isVisible));
      }),
      { numRuns: 500 },
    );
  });
});
