import { PostingList } from './posting-list.ts';

/**
 * The postings of some slots turned document by document: row `slot` holds the (list, weight) pairs of the
 * lists holding the slot, in list order. Built by counting in two linear passes over the lists; what the
 * index needs to renumber its slots (without sorting each list) and to compare two documents' vectors.
 */
export class ForwardIndex {
  private readonly starts: Int32Array;
  /** Entry e: list `lists[e]` holds the slot with weight `weights[e]`. */
  private readonly lists: Int32Array;
  private readonly weights: Float32Array;

  /** The postings of the slots `isKept` marks (1), from `lists`, whose slots are all below `slotCount`. */
  constructor(postingLists: readonly PostingList[], isKept: Uint8Array, slotCount: number) {
    this.starts = new Int32Array(slotCount + 1);
    for (const list of postingLists) {
      for (let i = 0; i < list.length; i++) if (isKept[list.slots[i]!] === 1) this.starts[list.slots[i]! + 1]!++;
    }
    for (let slot = 0; slot < slotCount; slot++) this.starts[slot + 1]! += this.starts[slot]!;
    this.lists = new Int32Array(this.starts[slotCount]!);
    this.weights = new Float32Array(this.lists.length);
    const filled = this.starts.slice(0, slotCount);
    postingLists.forEach((list, k) => {
      for (let i = 0; i < list.length; i++) {
        const slot = list.slots[i]!;
        if (isKept[slot] !== 1) continue;
        const entry = filled[slot]!++;
        this.lists[entry] = k;
        this.weights[entry] = list.weights[i]!;
      }
    });
  }

  /**
   * New posting lists (one per list given to the constructor) holding the slots of `order`, slot order[i]
   * renumbered i: appending row by row in the new order writes every list sorted.
   */
  postingsInOrder(order: Int32Array, listCount: number): PostingList[] {
    const lengths = new Int32Array(listCount);
    for (const slot of order) for (let entry = this.starts[slot]!; entry < this.starts[slot + 1]!; entry++) lengths[this.lists[entry]!]!++;
    const slots = Array.from(lengths, (length) => new Int32Array(length));
    const weights = Array.from(lengths, (length) => new Float32Array(length));
    const written = new Int32Array(listCount);
    order.forEach((slot, newSlot) => {
      for (let entry = this.starts[slot]!; entry < this.starts[slot + 1]!; entry++) {
        const k = this.lists[entry]!;
        slots[k]![written[k]!] = newSlot;
        weights[k]![written[k]!++] = this.weights[entry]!;
      }
    });
    return Array.from(lengths, (_, k) => PostingList.fromSorted(slots[k]!, weights[k]!));
  }

  /** Adds to `differing` every list where slots `a` and `b` differ: held by one only, or with other weights. */
  collectDifferences(a: number, b: number, differing: Set<number>): void {
    let i = this.starts[a]!;
    let j = this.starts[b]!;
    const endA = this.starts[a + 1]!;
    const endB = this.starts[b + 1]!;
    while (i < endA || j < endB) {
      const listA = i < endA ? this.lists[i]! : Infinity;
      const listB = j < endB ? this.lists[j]! : Infinity;
      if (listA === listB) {
        if (this.weights[i] !== this.weights[j]) differing.add(listA);
        i++;
        j++;
      } else if (listA < listB) {
        differing.add(listA);
        i++;
      } else {
        differing.add(listB);
        j++;
      }
    }
  }
}
