import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';
import { bm25Stems } from '../sparse/tokenize.ts';

/**
 * Share of the question's distinct content stems that a passage contains. Without a reranker or
 * dense model, fusion scores are rank-based and say nothing about relevance; coverage does.
 * Stems are the collection's BM25 language's, so "chevaux" covers "cheval" in a French collection.
 */
export function queryCoverage(question: string, passage: string, language?: Bm25Language): number {
  const wanted = new Set(bm25Stems(question, language));
  if (wanted.size === 0) return 0;
  const present = new Set(bm25Stems(passage, language));
  let found = 0;
  for (const stem of wanted) if (present.has(stem)) found += 1;
  return found / wanted.size;
}
