import type { SparseVector } from '../domain.ts';
import { bm25TokenId } from './murmur3.ts';
import { DEFAULT_BM25_LANGUAGE, type Bm25Language } from './languages/bm25-languages.ts';
import { bm25Stems } from './tokenize.ts';

// fastembed `Bm25` defaults (k, b, avg_len).
const K = 1.2;
const B = 0.75;
const AVG_LEN = 256.0;

function countStems(stems: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const stem of stems) counts.set(stem, (counts.get(stem) ?? 0) + 1);
  return counts;
}

/** Evaluated in fastembed's exact operation order so the doubles agree bit for bit. */
function termWeight(n: number, docLen: number): number {
  return (n * (K + 1)) / (n + K * ((1 - B) + ((B * docLen) / AVG_LEN)));
}

/**
 * Document vector of fastembed `Bm25.embed` / `passage_embed`: entries in first-occurrence order
 * of each distinct stem; a later stem hashing to the same index overwrites the value in place,
 * as a Python dict assignment does.
 * https://github.com/qdrant/fastembed/blob/main/fastembed/sparse/bm25.py (`_term_frequency`)
 */
export function encodeDocument(text: string, language: Bm25Language = DEFAULT_BM25_LANGUAGE): SparseVector {
  const stems = bm25Stems(text, language);
  const weights = new Map<number, number>();
  for (const [stem, n] of countStems(stems)) {
    weights.set(bm25TokenId(stem), termWeight(n, stems.length));
  }
  return { indices: [...weights.keys()], values: [...weights.values()] };
}

/**
 * Query vector of fastembed `Bm25.query_embed`: the unique indices, each with value 1; Qdrant's
 * IDF modifier supplies the weighting. Indices are sorted for determinism (fastembed emits set order).
 * Index 2147483648 (hash -2^31) is kept: `query_embed` raises under NumPy 2, but the matching
 * document index is 2147483648, so keeping it is what lets the query find that document.
 */
export function encodeQuery(text: string, language: Bm25Language = DEFAULT_BM25_LANGUAGE): SparseVector {
  const indices = [...new Set(bm25Stems(text, language).map(bm25TokenId))].sort((a, b) => a - b);
  return { indices, values: indices.map(() => 1.0) };
}
