/**
 * The documents holding one sparse index, as slots ascending with float32 weights (Qdrant stores
 * sparse values as f32). Slots only grow between compactions, so an upsert appends to the tail
 * and the list stays sorted. Deleted slots stay in place (the index's tombstones say which) until
 * the next compaction rewrites the list.
 */
export class PostingList {
  slots: Int32Array<ArrayBufferLike> = new Int32Array(4);
  weights: Float32Array<ArrayBufferLike> = new Float32Array(4);
  length = 0;
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
    for (const weight of weights) {
      if (weight > list.maxWeight) list.maxWeight = weight;
      if (weight < list.minWeight) list.minWeight = weight;
    }
    return list;
  }

  /** Adds `slot`, which is at least every slot stored; the same slot twice keeps the last weight. */
  append(slot: number, weight: number): void {
    const stored = Math.fround(weight);
    if (stored > this.maxWeight) this.maxWeight = stored;
    if (stored < this.minWeight) this.minWeight = stored;
    if (this.length > 0 && this.slots[this.length - 1] === slot) {
      this.weights[this.length - 1] = stored;
      return;
    }
    if (this.length === this.slots.length) this.grow(Math.max(4, this.length * 2));
    this.slots[this.length] = slot;
    this.weights[this.length] = stored;
    this.length++;
    this.documentFrequency++;
  }

  /** Rewrites the list without tombstoned slots, renumbered through `newSlotOf`, . */
  compact(isDeleted: Uint8Array, newSlotOf: Int32Array): void {
    let kept = 0;
    let maxWeight = -Infinity;
    let minWeight = Infinity;
    for (let i = 0; i < this.length; i++) {
      const slot = this.slots[i]!;
      if (isDeleted[slot] === 1) continue;
      const weight = this.weights[i]!;
      this.slots[kept] = newSlotOf[slot]!;
      this.weights[kept] = weight;
      if (weight > maxWeight) maxWeight = weight;
      if (weight < minWeight) minWeight = weight;
      kept++;
    }
    this.length = kept;
    this.maxWeight = maxWeight;
    this.minWeight = minWeight;
    if (this.slots.length > 2 * kept + 4) this.grow(kept + 4);
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

  private grow(capacity: number): void {
    const slots = new Int32Array(capacity);
    slots.set(this.slots.subarray(0, this.length));
    const weights = new Float32Array(capacity);
    weights.set(this.weights.subarray(0, this.length));
    this.slots = slots;
    this.weights = weights;
  }
}
