import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { bm25TokenId } from '../../src/sparse/murmur3.ts';
import { bm25Stems } from '../../src/sparse/tokenize.ts';

interface Vector {
  indices: number[];
  values: number[];
}

interface GoldenCase {
  name: string;
  text: string;
  stems: string[];
  token_ids: Record<string, number>;
  document: Vector;
  document_fastembed_order: Vector;
  query: Vector;
}

const golden = JSON.parse(
  readFileSync(new URL('../fixtures/bm25/bm25_golden.json', import.meta.url), 'utf8'),
) as { cases: GoldenCase[] };

describe('BM25 sparse vectors match fastembed Qdrant/bm25 (bm25_golden.json)', () => {
  it('has all 37 golden cases', () => {
    expect(golden.cases).toHaveLength(37);
  });

  describe.each(golden.cases.map((c) => [c.name, c] as const))('%s', (_name, golden) => {
    it('keeps the same stems in the same order', () => {
      expect(bm25Stems(golden.text)).toEqual(golden.stems);
    });

    it('hashes every stem to the same index', () => {
      for (const [stem, id] of Object.entries(golden.token_ids)) expect(bm25TokenId(stem)).toBe(id);
    });

    it('gives the document vector entry for entry, in fastembed emission order, values bit-exact', () => {
      const vector = encodeDocument(golden.text);
      expect(vector.indices).toEqual(golden.document_fastembed_order.indices);
      vector.values.forEach((value, i) => expect(value).toBe(golden.document_fastembed_order.values[i]));
      expect(vector.values).toHaveLength(golden.document_fastembed_order.values.length);
    });

    it('gives the query vector: unique indices sorted, each 1.0', () => {
      expect(encodeQuery(golden.text)).toEqual(golden.query);
    });
  });

  it('keeps index 2147483648 for a stem hashing to int32-min, in documents and queries alike', () => {
    expect(bm25TokenId('1872d942')).toBe(2147483648);
    expect(encodeDocument('1872d942 apple').indices).toContain(2147483648);
    expect(encodeQuery('1872d942 apple').indices).toContain(2147483648);
  });

  it('does not use the document weighting for queries (the seed service did)', () => {
    const text = 'leave leave policy';
    expect(encodeDocument(text).values.some((v) => v !== 1)).toBe(true);
    expect(encodeQuery(text).values).toEqual([1, 1]);
  });
});

describe('English stopwords', () => {
  it('are exactly the list fastembed loads (english.txt of Qdrant/bm25)', async () => {
    const { ENGLISH_STOPWORDS } = await import('../../src/sparse/english-stopwords.ts');
    const fastembedList = readFileSync(new URL('../fixtures/bm25/english_stopwords.txt', import.meta.url), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.length > 0);
    expect(fastembedList).toHaveLength(179);
    expect([...ENGLISH_STOPWORDS]).toEqual(fastembedList);
  });
});
