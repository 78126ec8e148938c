import { PostingList } from './posting-list.ts';

/** Copies are grouped only when they save at least this share of the live documents; below it the plain lists are read. */
const MIN_SHARE_SAVED = 0.25;

/**
 * Live documents with identical sparse vectors (same indices, same f32 weights), grouped under their
 * lowest slot, the representative. Identical vectors score identically, so a search can walk lists of
 * representatives only and offer every copy with the representative's score: a corpus held N times
 * (several versions of the same docs, repeated boilerplate) then costs about what one copy costs,
 * where N tied copies would otherwise reach the top k one by one. Built from an index that no longer
 * changes: any edit drops it (SparseIndex rebuilds it at the next search).
 */
export class CopyGroups {
  /** Group g holds members[starts[g] .. starts[g + 1]), ascending, the first being the representative. */
  private readonly groupOf: Int32Array;
  private readonly members: Int32Array;
  private readonly starts: Int32Array;
  private readonly representativeLists = new WeakMap<PostingList, PostingList>();

  private constructor(groupOf: Int32Array, members: Int32Array, starts: Int32Array) {
    this.groupOf = groupOf;
    this.members = members;
    this.starts = starts;
  }

  /**
   * The copies among the live slots (`deleted[s] !== 1`, s < slotCount), or undefined when they are too
   * few to be worth it. Vectors are hashed list by list, then every copy is checked posting by posting
   * against its representative, so that a hash collision only leaves a document in a group of its own.
   * `hashesOf` is for tests, to force collisions.
   */
  static find(lists: readonly PostingList[], slotCount: number, deleted: Uint8Array, hashesOf = vectorHashes): CopyGroups | undefined {
    const representativeOf = groupByHash(hashesOf(lists, slotCount), deleted);
    if (representativeOf === undefined) return undefined;
    separateMismatches(lists, representativeOf);
    return CopyGroups.fromRepresentatives(representativeOf, deleted);
  }

  private static fromRepresentatives(representativeOf: Int32Array, deleted: Uint8Array): CopyGroups | undefined {
    const slotCount = representativeOf.length;
    const groupOf = new Int32Array(slotCount).fill(-1);
    const sizes: number[] = [];
    let live = 0;
    for (let slot = 0; slot < slotCount; slot++) {
      if (deleted[slot] === 1) continue;
      live++;
      const representative = representativeOf[slot]!;
      if (representative === slot) {
        groupOf[slot] = sizes.length;
        sizes.push(0);
      } else {
        groupOf[slot] = groupOf[representative]!;
      }
      sizes[groupOf[slot]!]!++;
    }
    if (sizes.length > (1 - MIN_SHARE_SAVED) * live) return undefined;
    const starts = new Int32Array(sizes.length + 1);
    sizes.forEach((size, group) => (starts[group + 1] = starts[group]! + size));
    const filled = starts.slice(0, sizes.length);
    const members = new Int32Array(live);
    for (let slot = 0; slot < slotCount; slot++) if (groupOf[slot]! >= 0) members[filled[groupOf[slot]!]!++] = slot;
    return new CopyGroups(groupOf, members, starts);
  }

  /** The copies of `representative`, itself first, ascending. */
  copiesOf(representative: number): Int32Array {
    const group = this.groupOf[representative]!;
    return this.members.subarray(this.starts[group], this.starts[group + 1]);
  }

  /** `list` restricted to representatives (computed once per list and kept). */
  representativesIn(list: PostingList): PostingList {
    let kept = this.representativeLists.get(list);
    if (kept === undefined) {
      kept = new PostingList();
      for (let i = 0; i < list.length; i++) {
        const slot = list.slots[i]!;
        if (this.groupOf[slot]! >= 0 && this.members[this.starts[this.groupOf[slot]!]!] === slot) kept.append(slot, list.weights[i]!);
      }
      this.representativeLists.set(list, kept);
    }
    return kept;
  }
}

/**
 * A 53-bit hash of each slot's vector (its lists, in iteration order, and its weights' f32 bits): two
 * independent 32-bit hashes, one kept whole and 21 bits of the other, so the key is an exact double.
 */
export function vectorHashes(lists: Iterable<PostingList>, slotCount: number): Float64Array {
  const high = new Uint32Array(slotCount);
  const low = new Uint32Array(slotCount).fill(0x9e3779b9);
  const weightBits = new Uint32Array(1);
  const weightView = new Float32Array(weightBits.buffer);
  let listNumber = 0;
  for (const list of lists) {
    listNumber++;
    for (let i = 0; i < list.length; i++) {
      const slot = list.slots[i]!;
      weightView[0] = list.weights[i]!;
      high[slot] = Math.imul(high[slot]! ^ listNumber, 0x85ebca6b) ^ Math.imul(weightBits[0]!, 0xc2b2ae35);
      low[slot] = Math.imul((low[slot]! + weightBits[0]!) ^ Math.imul(listNumber, 0x27d4eb2f), 0x165667b1);
    }
  }
  return Float64Array.from(high, (hash, slot) => hash * 2 ** 21 + (low[slot]! >>> 11));
}

/** Each live slot's lowest live slot of the same hash, or undefined when fewer than MIN_SHARE_SAVED of them are copies. */
function groupByHash(hashes: Float64Array, deleted: Uint8Array): Int32Array | undefined {
  const representativeOf = new Int32Array(hashes.length);
  const firstWithHash = new Map<number, number>();
  let copies = 0;
  let live = 0;
  for (let slot = 0; slot < hashes.length; slot++) {
    representativeOf[slot] = slot;
    if (deleted[slot] === 1) continue;
    live++;
    const first = firstWithHash.get(hashes[slot]!);
    if (first === undefined) firstWithHash.set(hashes[slot]!, slot);
    else {
      representativeOf[slot] = first;
      copies++;
    }
  }
  return copies >= MIN_SHARE_SAVED * live ? representativeOf : undefined;
}

/**
 * A copy whose postings differ from its representative's (a hash collision) becomes its own representative.
 * Equal hashes imply the same lists only with high probability; this check makes the grouping exact:
 * each list must hold the copy exactly when it holds the representative, with the same weight.
 */
function separateMismatches(lists: readonly PostingList[], representativeOf: Int32Array): void {
  const slotCount = representativeOf.length;
  const weightIn = new Float32Array(slotCount);
  const seenIn = new Int32Array(slotCount);
  const heldCount = new Int32Array(slotCount);
  let listNumber = 0;
  for (const list of lists) {
    listNumber++;
    for (let i = 0; i < list.length; i++) {
      weightIn[list.slots[i]!] = list.weights[i]!;
      seenIn[list.slots[i]!] = listNumber;
      heldCount[list.slots[i]!]!++;
    }
    for (let i = 0; i < list.length; i++) {
      const slot = list.slots[i]!;
      const representative = representativeOf[slot]!;
      if (representative === slot) continue;
      if (seenIn[representative] !== listNumber || !Object.is(weightIn[representative], list.weights[i])) representativeOf[slot] = slot;
    }
  }
  // The same number of lists, all holding the representative, means the copy holds no list the representative lacks.
  for (let slot = 0; slot < slotCount; slot++) {
    if (representativeOf[slot] !== slot && heldCount[slot] !== heldCount[representativeOf[slot]!]) representativeOf[slot] = slot;
  }
}
