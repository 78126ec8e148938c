import type { RaggedArray } from '../ragged-array.ts';
import type { PostingList } from './posting-list.ts';

/**
 * Each live document's weights, row by row beside the index's rows of distinct indices (termsOfSlots):
 * entry i of a slot's row is the weight of its i-th smallest index. Filled by reading the posting lists in
 * ascending index order, which meets each slot's indices in its row's order, so no search is needed; what
 * comparing two documents' vectors takes, at 4 bytes a posting.
 */
export class ForwardIndex {
  private readonly starts: Int32Array;
  private readonly weights: Float32Array;

  /** `postings`: index → list; `isLive[slot] === 1` for the slots to hold, whose rows `termsOfSlots` gives. */
  constructor(
    private readonly termsOfSlots: RaggedArray<Uint32Array<ArrayBufferLike>>,
    postings: ReadonlyMap<number, PostingList>,
    isLive: Uint8Array,
  ) {
    const slotCount = termsOfSlots.length;
    this.starts = new Int32Array(slotCount + 1);
    for (let slot = 0; slot < slotCount; slot++) this.starts[slot + 1] = this.starts[slot]! + (isLive[slot] === 1 ? termsOfSlots.at(slot).length : 0);
    this.weights = new Float32Array(this.starts[slotCount]!);
    const filled = this.starts.slice(0, slotCount);
    for (const index of [...postings.keys()].sort((a, b) => a - b)) {
      const list = postings.get(index)!;
      for (let i = 0; i < list.length; i++) {
        const slot = list.slots[i]!;
        if (isLive[slot] === 1) this.weights[filled[slot]!++] = list.weights[i]!;
      }
    }
  }

  /** Whether slots `a` and `b` differ in at most `limit` indices (held by one only, or with other weights). */
  differsInAtMost(a: number, b: number, limit: number): boolean {
    const differing = new Set<number>();
    this.collectDifferences(a, b, differing, limit);
    return differing.size <= limit;
  }

  /**
   * Adds to `differing` every index where slots `a` and `b` differ: held by one only, or with other weights;
   * stops once `differing` holds more than `limit`.
   */
  collectDifferences(a: number, b: number, differing: Set<number>, limit = Infinity): void {
    const termsA = this.termsOfSlots.at(a);
    const termsB = this.termsOfSlots.at(b);
    const startA = this.starts[a]!;
    const startB = this.starts[b]!;
    let i = 0;
    let j = 0;
    while ((i < termsA.length || j < termsB.length) && differing.size <= limit) {
      const indexA = i < termsA.length ? termsA[i]! : Infinity;
      const indexB = j < termsB.length ? termsB[j]! : Infinity;
      if (indexA === indexB) {
        if (this.weights[startA + i] !== this.weights[startB + j]) differing.add(indexA);
        i++;
        j++;
      } else if (indexA < indexB) {
        differing.add(indexA);
        i++;
      } else {
        differing.add(indexB);
        j++;
      }
    }
  }
}
