/**
 * An order of a sparse index's documents that puts near-duplicates side by side: the same page in
 * several versions or folders, a template repeated across documents. Documents are grouped by a
 * bottom-k MinHash sketch of their index sets (Broder 1997): sets that differ in a few of their indices
 * usually share it, unrelated ones rarely. A group takes the place of its first member and every
 * other document keeps its place, so chunks of one document stay together.
 *
 * Why: a search then meets a group's members one after the other, so it can score the group once for
 * all of them (duplicate-groups.ts) instead of once per copy, and the k best copies of a strong chunk
 * fill the top k together, so the threshold reaches its final value early.
 */

/** How many of a set's smallest hashes name it: sets differing in one index of n share them with probability about 1 - 2k/n. */
const SKETCH_SIZE = 3;

/** murmur3's 32-bit finalizer: a well-mixed hash of an index. */
function mix(value: number): number {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * A key naming the set by the SKETCH_SIZE smallest hashes of its indices that are not common (a bottom-k
 * MinHash sketch), so near-identical sets usually share it. Common indices (a path segment in every chunk,
 * say) are left out: with a small hash they would sit in every set's sketch and make unrelated sets share
 * keys. Sets without enough rarer indices share keys more often; a collision only costs order.
 */
export function minHashKey(indices: ArrayLike<number>, isCommon: (index: number) => boolean): string {
  const smallest = [0xffffffff, 0xffffffff, 0xffffffff];
  for (let i = 0; i < indices.length; i++) {
    if (isCommon(indices[i]!)) continue;
    const hash = mix(indices[i]!);
    if (hash >= smallest[SKETCH_SIZE - 1]!) continue;
    let at = SKETCH_SIZE - 1;
    while (at > 0 && smallest[at - 1]! > hash) {
      smallest[at] = smallest[at - 1]!;
      at--;
    }
    smallest[at] = hash;
  }
  return smallest.join(',');
}

/** Slots in their new order, and where each group of them starts: group g is order[groupStarts[g] .. groupStarts[g + 1]). */
export interface NearDuplicateOrder {
  order: Int32Array;
  groupStarts: Int32Array;
}

/**
 * `slots` (ascending) reordered so that slots of equal `keyOf` follow the first of them; the order is
 * otherwise kept. A counting sort by group in order of first appearance, so linear in the slots.
 */
export function nearDuplicateOrder(slots: Int32Array, keyOf: (slot: number) => string): NearDuplicateOrder {
  const groupOfKey = new Map<string, number>();
  const groupOfPosition = new Int32Array(slots.length);
  const sizes: number[] = [];
  slots.forEach((slot, position) => {
    const key = keyOf(slot);
    let group = groupOfKey.get(key);
    if (group === undefined) {
      group = sizes.length;
      groupOfKey.set(key, group);
      sizes.push(0);
    }
    groupOfPosition[position] = group;
    sizes[group]!++;
  });
  const groupStarts = new Int32Array(sizes.length + 1);
  sizes.forEach((size, group) => (groupStarts[group + 1] = groupStarts[group]! + size));
  const next = groupStarts.slice(0, sizes.length);
  const order = new Int32Array(slots.length);
  slots.forEach((slot, position) => (order[next[groupOfPosition[position]!]!++] = slot));
  return { order, groupStarts };
}

/** How many groups already formed in a sketch group a document is compared with before it starts its own. */
const REPRESENTATIVES_COMPARED = 8;

/**
 * Splits each group of `grouped` into runs of documents `areNear` its first member (its representative),
 * keeping the order within each run: a shared sketch only proposes near-duplicates, the vectors decide.
 */
export function splitGroups({ order, groupStarts }: NearDuplicateOrder, areNear: (representative: number, slot: number) => boolean): NearDuplicateOrder {
  const refined = new Int32Array(order.length);
  const starts: number[] = [0];
  let written = 0;
  for (let group = 0; group + 1 < groupStarts.length; group++) {
    const runs: number[][] = [];
    for (let position = groupStarts[group]!; position < groupStarts[group + 1]!; position++) {
      const slot = order[position]!;
      const run = runs.slice(-REPRESENTATIVES_COMPARED).find((members) => areNear(members[0]!, slot));
      if (run) run.push(slot);
      else runs.push([slot]);
    }
    for (const members of runs) {
      refined.set(members, written);
      written += members.length;
      starts.push(written);
    }
  }
  return { order: refined, groupStarts: Int32Array.from(starts) };
}
