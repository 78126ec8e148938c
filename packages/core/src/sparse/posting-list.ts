/** Postings per block: block b holds positions b × BLOCK_SIZE .. (b + 1) × BLOCK_SIZE - 1. */
export const BLOCK_SIZE = 64;
const BLOCK_SHIFT = 6;

/**
 * The documents holding one sparse index, as slots ascending with float32 weights (Qdrant stores
 * sparse values as f32). Slots only grow between compactions, so an upsert appends to the tail
 * and the list stays sorted. Deleted slots stay in place (the index's tombstones say which) until
 * the next compaction rewrites the list.
 *
 * Each block of BLOCK_SIZE postings keeps the largest and smallest weight stored in it (block-max
 * indexes, Ding & Suel 2011), so a search bounds what a term adds over a run of slots more tightly
 * than by the whole list's extremes. They are computed where the weights are read anyway (a load, a
 * compaction) and kept up to date by appends; like maxWeight they may overstate, never understate.
 */
export class PostingList {
  slots: Int32Array<ArrayBufferLike> = new Int32Array(4);
  weights: Float32Array<ArrayBufferLike> = new Float32Array(4);
  length = 0;
  /** blockMax[b], blockMin[b]: bounds over the weights stored in block b (as written, deleted ones included). */
  blockMax = new Float32Array(1);
  blockMin = new Float32Array(1);
  /** Live documents holding the index: Qdrant's document frequency. */
  documentFrequency = 0;
  /** Bounds over every stored weight, deleted ones included, so they never understate a live one. */
  maxWeight = -Infinity;
  minWeight = Infinity;

  /** A list of distinct ascending slots with their weights, used in place (a later append copies them). */
  static fromSorted(slots: Int32Array<ArrayBufferLike>, weights: Float32Array<ArrayBufferLike>): PostingList {
    const list = new PostingList();
    list.slots = slots;
    list.weights = weights;
    list.length = slots.length;
    list.documentFrequency = slots.length;
    list.computeBounds();
    return list;
  }

  /** The last slot of the block holding position `position` (< length). */
  blockLastSlot(position: number): number {
    return this.slots[Math.min(this.length, ((position >>> BLOCK_SHIFT) + 1) << BLOCK_SHIFT) - 1]!;
  }

  /** The most a query weight `weight` times a weight of the block holding `position` adds (0 when it can only lower a score). */
  blockBound(position: number, weight: number): number {
    const block = position >>> BLOCK_SHIFT;
    return Math.max(0, weight * this.blockMax[block]!, weight * this.blockMin[block]!);
  }

  /** Adds `slot`, which is at least every slot stored; the same slot twice keeps the last weight. */
  append(slot: number, weight: number): void {
    const stored = Math.fround(weight);
    if (stored > this.maxWeight) this.maxWeight = stored;
    if (stored < this.minWeight) this.minWeight = stored;
    if (this.length > 0 && this.slots[this.length - 1] === slot) {
      this.weights[this.length - 1] = stored;
      this.widenBlock(this.length - 1, stored);
      return;
    }
    if (this.length === this.slots.length) this.grow(Math.max(4, this.length * 2));
    this.slots[this.length] = slot;
    this.weights[this.length] = stored;
    this.widenBlock(this.length, stored);
    this.length++;
    this.documentFrequency++;
  }

  /** Rewrites the list without tombstoned slots, renumbered through `newSlotOf`, with its bounds over what it keeps. */
  compact(isDeleted: Uint8Array, newSlotOf: Int32Array): void {
    let kept = 0;
    for (let i = 0; i < this.length; i++) {
      const slot = this.slots[i]!;
      if (isDeleted[slot] === 1) continue;
      this.slots[kept] = newSlotOf[slot]!;
      this.weights[kept] = this.weights[i]!;
      kept++;
    }
    this.length = kept;
    if (this.slots.length > 2 * kept + 4) this.grow(kept + 4);
    this.computeBounds();
  }

  /**
   * Renumbers the list in place through `newSlotOf`, dropping the slots `isLive` does not mark, and sorts it
   * again: each (slot, weight) pair packed in one double (slot × 2^32 + the weight's float32 bits, exact below
   * 2^53) so that one native sort of a typed array orders them. `scratch` holds at least `length` doubles.
   */
  renumber(newSlotOf: Int32Array, isLive: Uint8Array, scratch: Float64Array): void {
    const bits = new Uint32Array(this.weights.buffer, this.weights.byteOffset, this.length);
    let kept = 0;
    for (let i = 0; i < this.length; i++) {
      const slot = this.slots[i]!;
      if (isLive[slot] === 1) scratch[kept++] = newSlotOf[slot]! * 0x100000000 + bits[i]!;
    }
    const sorted = scratch.subarray(0, kept).sort();
    for (let i = 0; i < kept; i++) {
      const slot = Math.floor(sorted[i]! / 0x100000000);
      this.slots[i] = slot;
      bits[i] = sorted[i]! - slot * 0x100000000;
    }
    this.length = kept;
    this.documentFrequency = kept;
    if (this.slots.length > 2 * kept + 4) this.grow(kept + 4);
    this.computeBounds();
  }

  /** The first position at or after `from` whose slot is at least `slot` (galloping, then binary search). */
  seek(from: number, slot: number): number {
    const slots = this.slots;
    const end = this.length;
    if (from >= end || slots[from]! >= slot) return from;
    let step = 1;
    let low = from;
    let high = from + 1;
    while (high < end && slots[high]! < slot) {
      low = high;
      step *= 2;
      high = from + step;
    }
    if (high > end) high = end;
    while (low + 1 < high) {
      const middle = (low + high) >>> 1;
      if (slots[middle]! < slot) low = middle;
      else high = middle;
    }
    return high;
  }

  trimToSize(): void {
    if (this.slots.length > this.length) this.grow(this.length);
  }

  /** maxWeight, minWeight and every block's bounds from the weights stored, in one pass. */
  private computeBounds(): void {
    const blocks = (this.length + BLOCK_SIZE - 1) >>> BLOCK_SHIFT;
    if (this.blockMax.length < blocks || this.blockMax.length > 2 * blocks + 1) {
      this.blockMax = new Float32Array(Math.max(1, blocks));
      this.blockMin = new Float32Array(Math.max(1, blocks));
    }
    let maxWeight = -Infinity;
    let minWeight = Infinity;
    for (let block = 0; block < blocks; block++) {
      let blockMax = -Infinity;
      let blockMin = Infinity;
      const end = Math.min(this.length, (block + 1) << BLOCK_SHIFT);
      for (let i = block << BLOCK_SHIFT; i < end; i++) {
        const weight = this.weights[i]!;
        if (weight > blockMax) blockMax = weight;
        if (weight < blockMin) blockMin = weight;
      }
      this.blockMax[block] = blockMax;
      this.blockMin[block] = blockMin;
      if (blockMax > maxWeight) maxWeight = blockMax;
      if (blockMin < minWeight) minWeight = blockMin;
    }
    this.maxWeight = maxWeight;
    this.minWeight = minWeight;
  }

  /** Takes `weight`, written at `position`, into its block's bounds (a block's first write sets them). */
  private widenBlock(position: number, weight: number): void {
    const block = position >>> BLOCK_SHIFT;
    if (block >= this.blockMax.length) {
      const capacity = Math.max(block + 1, this.blockMax.length * 2);
      const blockMax = new Float32Array(capacity);
      const blockMin = new Float32Array(capacity);
      blockMax.set(this.blockMax);
      blockMin.set(this.blockMin);
      this.blockMax = blockMax;
      this.blockMin = blockMin;
    }
    if (position === block << BLOCK_SHIFT && position === this.length) {
      this.blockMax[block] = weight;
      this.blockMin[block] = weight;
      return;
    }
    if (weight > this.blockMax[block]!) this.blockMax[block] = weight;
    if (weight < this.blockMin[block]!) this.blockMin[block] = weight;
  }

  private grow(capacity: number): void {
    const slots = new Int32Array(capacity);
    slots.set(this.slots.subarray(0, this.length));
    const weights = new Float32Array(capacity);
    weights.set(this.weights.subarray(0, this.length));
    this.slots = slots;
    this.weights = weights;
  }
}
