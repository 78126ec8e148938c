import { describe, expect, it } from 'vitest';
import { CopyGroups } from '../../src/sparse/copy-groups.ts';
import { PostingList } from '../../src/sparse/posting-list.ts';

/** Slot s holds vectors[s] as (list number, weight) pairs; the lists are built from them, slot by slot. */
function listsOf(vectors: ReadonlyArray<ReadonlyArray<readonly [number, number]>>): PostingList[] {
  const lists = Array.from({ length: 4 }, () => new PostingList());
  vectors.forEach((vector, slot) => vector.forEach(([list, weight]) => lists[list]!.append(slot, weight)));
  return lists;
}

const A = [[0, 1.5], [1, 0.25], [2, 3]] as const;
const vectors = [
  A,
  A,
  A,
  A,
  [[0, 1.5], [1, 0.25], [3, 3]], // 4: the same weights, one list differs
  [[0, 1.5], [1, 0.5], [2, 3]], // 5: the same lists, one weight differs
  [[0, 1.5], [1, 0.25]], // 6: A without one of its lists
  A,
  A, // 8: deleted
] as const;
const deleted = Uint8Array.from(vectors, (_, slot) => (slot === 8 ? 1 : 0));

describe('CopyGroups', () => {
  it('groups identical live vectors under their lowest slot, even when every hash collides', () => {
    const lists = listsOf(vectors);
    const groups = CopyGroups.find(lists, vectors.length, deleted, (_, slotCount) => new Float64Array(slotCount))!;
    expect([...groups.copiesOf(0)]).toEqual([0, 1, 2, 3, 7]);
    for (const slot of [4, 5, 6]) expect([...groups.copiesOf(slot)]).toEqual([slot]);
    const representatives = groups.representativesIn(lists[0]!);
    expect([...representatives.slots.subarray(0, representatives.length)]).toEqual([0, 4, 5, 6]);
    expect([...representatives.weights.subarray(0, representatives.length)]).toEqual([1.5, 1.5, 1.5, 1.5]);
  });

  it('finds the same groups with the real hashes', () => {
    const groups = CopyGroups.find(listsOf(vectors), vectors.length, deleted)!;
    expect([...groups.copiesOf(0)]).toEqual([0, 1, 2, 3, 7]);
    for (const slot of [4, 5, 6]) expect([...groups.copiesOf(slot)]).toEqual([slot]);
  });

  it('gives no groups when copies are less than a quarter of the live vectors', () => {
    const distinct = [A, [[0, 1]], [[1, 1]], [[2, 1]], [[3, 1]], A] as const;
    expect(CopyGroups.find(listsOf(distinct), distinct.length, new Uint8Array(distinct.length))).toBeUndefined();
  });
});
