/**
 * Diversity: keeps, in rank order, at most `maxPerSource` hits of each source (1: every hit from a different
 * document). Applied to the final ranking (after fusion and rerank) over more candidates than k, so that
 * k hits remain when enough sources match.
 */
export function capPerSource<T extends { source: string }>(hits: readonly T[], maxPerSource: number | undefined): T[] {
  if (maxPerSource === undefined) return [...hits];
  const taken = new Map<string, number>();
  return hits.filter((hit) => {
    const count = taken.get(hit.source) ?? 0;
    if (count >= maxPerSource) return false;
    taken.set(hit.source, count + 1);
    return true;
  });
}
