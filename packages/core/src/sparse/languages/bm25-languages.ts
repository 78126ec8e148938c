/**
 * The languages of fastembed's `Bm25(language=…)` (`supported_languages`: the Snowball stemmers of
 * py-rust-stemmers), whose vectors ours equal, plus `cjk`, our own mode for Chinese, Japanese and Korean text
 * (no fastembed equivalent: see cjk-terms.ts).
 * https://github.com/qdrant/fastembed/blob/main/fastembed/sparse/bm25.py
 */
export const SNOWBALL_LANGUAGES = [
  'arabic',
  'danish',
  'dutch',
  'english',
  'finnish',
  'french',
  'german',
  'greek',
  'hungarian',
  'italian',
  'norwegian',
  'portuguese',
  'romanian',
  'russian',
  'spanish',
  'swedish',
  'tamil',
  'turkish',
] as const;

export const BM25_LANGUAGES = [...SNOWBALL_LANGUAGES, 'cjk'] as const;

export type SnowballLanguage = (typeof SNOWBALL_LANGUAGES)[number];
export type Bm25Language = (typeof BM25_LANGUAGES)[number];

/** What a collection that records no language was built with: every collection made before BM25_LANGUAGE. */
export const DEFAULT_BM25_LANGUAGE: Bm25Language = 'english';

export function isBm25Language(value: unknown): value is Bm25Language {
  return typeof value === 'string' && (BM25_LANGUAGES as readonly string[]).includes(value);
}
