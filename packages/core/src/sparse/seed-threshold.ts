import { BestMatches } from './best-matches.ts';
import type { PostingList } from './posting-list.ts';

/** A query index that some live document holds, as SparseIndex.search walks it. */
export interface QueryTerm {
  list: PostingList;
  /** query value × idf */
  weight: number;
  /** The most this term adds to any document's score (0 when it can only lower it). */
  bound: number;
  /** Position in the query, to sum contributions in the same order as an exhaustive scan. */
  queryPosition: number;
}

/**
 * A score the `limit`-th best match is sure to reach, to prune with from the first candidate on: the exact
 * scores of `limit` eligible documents, the k-th best of which can only be beaten. They are the documents
 * where the term of the highest bound contributes most, which usually hold the other terms too. Without
 * it MaxScore's threshold rises only as good documents turn up in slot order, late when the best ones sit
 * at the end. -Infinity when fewer than `limit` such documents are eligible.
 */
export function seedThreshold(
  terms: readonly QueryTerm[],
  byQueryPosition: readonly number[],
  limit: number,
  isEligible: (slot: number) => boolean,
): number {
  const strongest = terms.at(-1);
  if (strongest === undefined || strongest.bound <= 0) return -Infinity;
  const slots = strongestSlots(strongest, limit, isEligible);
  if (slots.length < limit) return -Infinity;
  // Ascending slots, so each list is walked forward once rather than searched from its start per slot.
  slots.sort((a, b) => a - b);
  const cursors = new Int32Array(terms.length);
  let lowest = Infinity;
  for (const slot of slots) lowest = Math.min(lowest, exactScore(terms, byQueryPosition, slot, cursors));
  return lowest;
}

/** The `limit` eligible slots where `term` contributes most (eligibility checked only for those that would enter). */
function strongestSlots(term: QueryTerm, limit: number, isEligible: (slot: number) => boolean): number[] {
  const { list, weight } = term;
  const best = new BestMatches(limit);
  for (let i = 0; i < list.length; i++) {
    const contribution = weight * list.weights[i]!;
    if (contribution < best.threshold || !isEligible(list.slots[i]!)) continue;
    best.offer(String(list.slots[i]), contribution);
  }
  return best.sorted().map(({ id }) => Number(id));
}

/**
 * The slot's score, summed in query order as the search sums it, so both give the same double. `cursors[k]`:
 * where terms[k]'s list is read from; it is left at the slot, so ascending slots walk each list once.
 */
function exactScore(terms: readonly QueryTerm[], byQueryPosition: readonly number[], slot: number, cursors: Int32Array): number {
  let score = 0;
  for (const k of byQueryPosition) {
    const { list, weight } = terms[k]!;
    const position = list.seek(cursors[k]!, slot);
    cursors[k] = position;
    if (position < list.length && list.slots[position] === slot) score += weight * list.weights[position]!;
  }
  return score;
}
