import { readFileSync } from 'node:fs';

/**
 * The English stopword list fastembed's `Bm25` loads (`english.txt` of the HF repo Qdrant/bm25,
 * NLTK's list, 179 lines). Entries containing `'` can never match a token; kept for fidelity.
 * https://github.com/qdrant/fastembed/blob/main/fastembed/sparse/bm25.py (`_load_stopwords`)
 */
export const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set(
  readFileSync(new URL('./english-stopwords.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0),
);
