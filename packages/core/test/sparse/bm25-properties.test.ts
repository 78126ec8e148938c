/**
 * Properties of the BM25 encoder over random text, checked with fast-check.
 *
 * What Qdrant needs of a sparse vector (its server and its client's local mode validate the same):
 * as many values as indices, indices unique unsigned 32-bit integers, values finite. It sorts the
 * indices itself on upsert, so order is not required. The query vector is sorted; the document vector
 * deliberately is not: it keeps fastembed's emission order (first occurrence of each stem), so it
 * equals fastembed's output entry for entry (bm25.test.ts checks 37 golden cases that way). Here the
 * document vector must be unique, in range and positive, and sorted it must be the same vector.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';

const WORDS = ['backup', 'backups', 'restoring', 'the', 'a', "don't", 'Snapshot', 'SNAPSHOTS', 'café', 'naïve', 'ß', 'İstanbul', '日本語', '😀', 'x'.repeat(41), 'run-book', 'k8s', '2024', '_', '#', '...'];

/** Text a document may hold: arbitrary code points (lone surrogates included), or words and punctuation. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 400 }),
  fc.string({ unit: 'grapheme', maxLength: 400 }),
  fc.array(fc.oneof(fc.constantFrom(...WORDS), fc.string({ maxLength: 12 })), { maxLength: 300 }).map((words) => words.join(' ')),
);

const UINT32_LIMIT = 2 ** 32;

function expectValidForQdrant(vector: { indices: number[]; values: number[] }): void {
  expect(vector.values).toHaveLength(vector.indices.length);
  expect(new Set(vector.indices).size).toBe(vector.indices.length);
  for (const index of vector.indices) {
    expect(Number.isInteger(index)).toBe(true);
    expect(index).toBeGreaterThanOrEqual(0);
    expect(index).toBeLessThan(UINT32_LIMIT);
  }
  for (const value of vector.values) {
    expect(Number.isFinite(value)).toBe(true);
    expect(value).toBeGreaterThan(0);
  }
}

describe('the BM25 encoder on random text', () => {
  it('gives a query vector of unique indices in ascending order, each 1.0', () => {
    fc.assert(
      fc.property(text, (input) => {
        const query = encodeQuery(input);
        expectValidForQdrant(query);
        for (let i = 1; i < query.indices.length; i += 1) expect(query.indices[i]!).toBeGreaterThan(query.indices[i - 1]!);
        expect(query.values.every((value) => value === 1)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('gives a document vector of unique, in-range indices with positive values, the same vector once sorted', () => {
    fc.assert(
      fc.property(text, (input) => {
        const document = encodeDocument(input);
        expectValidForQdrant(document);
        // Emission order is fastembed's; sorting by index (what Qdrant does on upsert) loses nothing.
        const sorted = document.indices.map((index, i) => [index, document.values[i]!] as const).sort((a, b) => a[0] - b[0]);
        expect(new Map(sorted)).toEqual(new Map(document.indices.map((index, i) => [index, document.values[i]!])));
      }),
      { numRuns: 300 },
    );
  });

  it('indexes a text under the same dimensions as a document and as a query, and deterministically', () => {
    fc.assert(
      fc.property(text, (input) => {
        const document = encodeDocument(input);
        expect(new Set(encodeQuery(input).indices)).toEqual(new Set(document.indices));
        expect(encodeDocument(input)).toEqual(document);
      }),
      { numRuns: 200 },
    );
  });

  it('weights a repeated word no less than a single one, in a text of the same length', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), (times) => {
        // "backup" ×times followed by distinct filler words, against "backup" once in a text as long.
        const filler = Array.from({ length: 60 }, (_, i) => `word${i}`);
        const repeated = encodeDocument([...Array.from({ length: times }, () => 'backup'), ...filler.slice(times)].join(' '));
        const once = encodeDocument(['backup', ...filler.slice(1)].join(' '));
        const weightOf = (vector: { indices: number[]; values: number[] }) => vector.values[vector.indices.indexOf(encodeQuery('backup').indices[0]!)]!;
        expect(weightOf(repeated)).toBeGreaterThanOrEqual(weightOf(once));
      }),
      { numRuns: 50 },
    );
  });
});
