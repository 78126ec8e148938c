import { stem } from 'porter2';
import { ENGLISH_STOPWORDS } from './english-stopwords.ts';

/** fastembed `Bm25(token_max_length=40)`: longer tokens are dropped, counted in code points before stemming. */
const TOKEN_MAX_LENGTH = 40;

/** Python's `\w` under Unicode 14: runs of it are what fastembed's remove-punctuation + split leaves. */
const WORD_RUN = /[\p{L}\p{N}_]+/gu;
const SINGLE_PUNCTUATION = /^\p{P}$/u;

function codePointLength(token: string): number {
  // A UTF-16 length within the limit cannot hide more code points than that.
  return token.length <= TOKEN_MAX_LENGTH ? token.length : [...token].length;
}

function isDropped(token: string): boolean {
  return (
    SINGLE_PUNCTUATION.test(token) ||
    ENGLISH_STOPWORDS.has(token) ||
    codePointLength(token) > TOKEN_MAX_LENGTH
  );
}

/**
 * The kept stems of `text`, in order, as fastembed's `Bm25._stem` (language english) makes them:
 * filters in its order (single punctuation, stopword, length), then Snowball English
 * (porter2 = rust-stemmers 1.2.0), empty stems dropped.
 * https://github.com/qdrant/fastembed/blob/main/fastembed/sparse/bm25.py
 */
export function bm25Stems(text: string): string[] {
  const tokens = text.toLowerCase().match(WORD_RUN) ?? [];
  const stems: string[] = [];
  for (const token of tokens) {
    if (isDropped(token)) continue;
    const stemmed = stem(token);
    if (stemmed.length > 0) stems.push(stemmed);
  }
  return stems;
}
