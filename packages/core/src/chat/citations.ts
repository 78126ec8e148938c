import type { SearchHit } from '../domain.ts';

export interface Citation {
  source: string;
  headingPath: string;
  chunkIndex: number;
  score: number;
}

export function passageLabel(hit: Pick<SearchHit, 'source' | 'chunkIndex'>): string {
  return `${hit.source}#${hit.chunkIndex}`;
}

export function toCitation(hit: SearchHit): Citation {
  return { source: hit.source, headingPath: hit.headingPath, chunkIndex: hit.chunkIndex, score: hit.score };
}

/** `[source#3]` labels in an answer, in order of first appearance; `[a#1, b#2]` counts as two. */
export function citedLabels(answer: string): string[] {
  const labels = new Set<string>();
  for (const bracket of answer.matchAll(/\[([^\[\]]+#\d+(?:\s*[,;]\s*[^\[\]]+#\d+)*)\]/g)) {
    for (const label of bracket[1]!.split(/\s*[,;]\s*/)) labels.add(label.trim());
  }
  return [...labels];
}

/**
 * Splits the answer's citations into the passages it cites and labels that match no passage given
 * (a model inventing a source); the latter are reported, never shown as sources.
 */
export function resolveCitations(answer: string, passages: SearchHit[]): { citations: Citation[]; unknownCitations: string[] } {
  const byLabel = new Map(passages.map((hit) => [passageLabel(hit), hit]));
  const citations: Citation[] = [];
  const unknownCitations: string[] = [];
  for (const label of citedLabels(answer)) {
    const hit = byLabel.get(label);
    if (hit) citations.push(toCitation(hit));
    else unknownCitations.push(label);
  }
  return { citations, unknownCitations };
}
