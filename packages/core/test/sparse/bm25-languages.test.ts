import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { SNOWBALL_LANGUAGES, type SnowballLanguage } from '../../src/sparse/languages/bm25-languages.ts';
import { snowballStemmer } from '../../src/sparse/languages/snowball-stemmers.ts';
import { bm25Stems } from '../../src/sparse/tokenize.ts';

/**
 * Goldens made by packages/core/scripts/bm25-language-goldens.py with fastembed 0.9.1's own `Bm25(language=…)`
 * (https://github.com/qdrant/fastembed/blob/main/fastembed/sparse/bm25.py) and the stemmer it calls,
 * py-rust-stemmers 0.1.8 (https://pypi.org/project/py-rust-stemmers/), per language. English is pinned by
 * ../fixtures/bm25/ (shared/reference), the other 17 Snowball languages here.
 */
interface LanguageGolden {
  language: SnowballLanguage;
  stems: [string, string][];
  cases: { text: string; stems: string[]; document: { indices: number[]; values: number[] }; query: number[] }[];
}

const folder = new URL('../fixtures/bm25-languages/', import.meta.url);
const goldens = readdirSync(folder)
  .filter((name) => name.endsWith('.json'))
  .map((name) => JSON.parse(readFileSync(new URL(name, folder), 'utf8')) as LanguageGolden);

describe('BM25 in every fastembed language matches fastembed with py-rust-stemmers', () => {
  it('covers every Snowball language but English (pinned by the shared goldens)', () => {
    expect(goldens.map((golden) => golden.language).sort()).toEqual(SNOWBALL_LANGUAGES.filter((language) => language !== 'english'));
  });

  describe.each(goldens.map((golden) => [golden.language, golden] as const))('%s', (language, golden) => {
    it(`stems ${golden.stems.length} words as py-rust-stemmers does`, () => {
      const stem = snowballStemmer(language);
      const differences = golden.stems.filter(([word, expected]) => stem(word) !== expected).map(([word, expected]) => `${word}: ${expected} ≠ ${stem(word)}`);
      expect(differences).toEqual([]);
    });

    it(`gives the same stems and vectors on ${golden.cases.length} texts`, () => {
      for (const golden_ of golden.cases) {
        expect(bm25Stems(golden_.text, language)).toEqual(golden_.stems);
        // Emission order and values compared exactly: the doubles must agree bit for bit.
        expect(encodeDocument(golden_.text, language)).toEqual(golden_.document);
        expect(encodeQuery(golden_.text, language).indices).toEqual(golden_.query);
      }
    });
  });

  it('French no longer goes through the English analyzer: plurals, verb forms and elisions meet', () => {
    const stems = (text: string) => bm25Stems(text, 'french');
    expect(stems("l'index")).toEqual(stems('index'));
    expect(stems('les collections')).toEqual(stems('la collection'));
    expect(stems('déployer')).toEqual(stems('déployée'));
    expect(bm25Stems('les collections', 'english')).not.toEqual(bm25Stems('la collection', 'english'));
  });
});
