import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';
import { bm25Stems } from '../sparse/tokenize.ts';

/**
 * How much of a sentence a passage supports, lexically: the share of the sentence's distinct content stems
 * (the collection's BM25 analyzer: stopwords out, Snowball stems, so "rotated" meets "rotation" as "rotat")
 * that the passage contains. A sentence the model wrote from a passage reuses its terms, names and numbers;
 * one it added from elsewhere brings terms the passage lacks. It measures overlap, not entailment: a
 * negated copy of a passage's sentence scores as well as the sentence (see docs/api.md, "Grounding").
 */
export function sentenceSupport(sentenceStems: ReadonlySet<string>, passageStems: ReadonlySet<string>): number {
  if (sentenceStems.size === 0) return 0;
  let found = 0;
  for (const stem of sentenceStems) if (passageStems.has(stem)) found += 1;
  return found / sentenceStems.size;
}

export function contentStems(text: string, language?: Bm25Language): Set<string> {
  return new Set(bm25Stems(text, language));
}
