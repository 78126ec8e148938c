import { bm25Stems } from '../sparse/tokenize.ts';

/**
 * Share of the question's distinct content stems that a passage contains. Without a reranker or
 * dense model, fusion scores are rank-based and say nothing about relevance; coverage does.
 */
export function queryCoverage(question: string, passage: string): number {
  const wanted = new Set(bm25Stems(question));
  if (wanted.size === 0) return 0;
  const present = new Set(bm25Stems(passage));
  let found = 0;
  for (const stem of wanted) if (present.has(stem)) found += 1;
  return found / wanted.size;
}
