import { RaggedArray } from '../ragged-array.ts';
import type { ForwardIndex } from './forward-index.ts';

/** A group whose members differ on more indices than this is not kept: few queries would find it uniform. */
const MAX_DIFFERING_INDICES = 256;

/** DuplicateGroups.sections: each slot's group (-1: none), and each group's differing indices. */
export interface DuplicateGroupSections {
  groupOfSlot: Int32Array;
  differing: Uint32Array;
  differingStarts: Int32Array;
}

/**
 * Runs of consecutive slots holding near-duplicate documents (see near-duplicate-order.ts), each with the
 * sparse indices on which its members' vectors differ. For a query holding none of them the members are
 * identical on every query index, so they score the same: a search scores the first and offers them all.
 * Members never change: an upsert takes a new slot outside every group and a delete leaves a tombstone,
 * so a group's differing indices stay true (a superset once members are deleted) until it is rebuilt.
 */
export class DuplicateGroups {
  private groupOfSlot: Int32Array<ArrayBufferLike>;
  /** One past each group's last slot. */
  private ends: Int32Array;
  private readonly differing: RaggedArray<Uint32Array<ArrayBufferLike>>;
  /** For each index, the groups whose members differ on it. */
  private readonly groupsDifferingOn = new Map<number, number[]>();

  private constructor(groupOfSlot: Int32Array<ArrayBufferLike>, differing: RaggedArray<Uint32Array<ArrayBufferLike>>) {
    this.groupOfSlot = groupOfSlot;
    this.differing = differing;
    this.ends = endsOf(groupOfSlot, differing.length);
    for (let group = 0; group < differing.length; group++) {
      for (const index of differing.at(group)) {
        const groups = this.groupsDifferingOn.get(index);
        if (groups) groups.push(group);
        else this.groupsDifferingOn.set(index, [group]);
      }
    }
  }

  get count(): number {
    return this.differing.length;
  }

  get groupedSlots(): number {
    return this.groupOfSlot.reduce((total, group) => total + (group >= 0 ? 1 : 0), 0);
  }

  static none(): DuplicateGroups {
    return new DuplicateGroups(new Int32Array(0), new RaggedArray(Uint32Array));
  }

  /**
   * The groups of a renumbered index: group g holds new slots groupStarts[g] .. groupStarts[g + 1] - 1, whose
   * old slots `order` gives; `forward` holds the old slots' vectors.
   */
  static build(order: Int32Array, groupStarts: Int32Array, forward: ForwardIndex): DuplicateGroups {
    const groupOfSlot = new Int32Array(order.length).fill(-1);
    const differing = new RaggedArray<Uint32Array<ArrayBufferLike>>(Uint32Array);
    const differingIndices = new Set<number>();
    for (let group = 0; group + 1 < groupStarts.length; group++) {
      const first = groupStarts[group]!;
      const end = groupStarts[group + 1]!;
      if (end - first < 2) continue;
      differingIndices.clear();
      for (let member = first + 1; member < end && differingIndices.size <= MAX_DIFFERING_INDICES; member++) {
        forward.collectDifferences(order[first]!, order[member]!, differingIndices);
      }
      if (differingIndices.size > MAX_DIFFERING_INDICES) continue;
      groupOfSlot.fill(differing.length, first, end);
      differing.push(Uint32Array.from(differingIndices));
    }
    differing.trimToSize();
    return new DuplicateGroups(groupOfSlot, differing);
  }

  /** Groups from sections' arrays, used in place. */
  static fromSections({ groupOfSlot, differing, differingStarts }: DuplicateGroupSections): DuplicateGroups {
    return new DuplicateGroups(groupOfSlot, RaggedArray.fromSections(Uint32Array, differing, differingStarts));
  }

  /** `slotCount` slots' groups, the slots past the grouped ones being in none. */
  sections(slotCount: number): DuplicateGroupSections {
    const groupOfSlot = new Int32Array(slotCount).fill(-1);
    groupOfSlot.set(this.groupOfSlot.subarray(0, Math.min(slotCount, this.groupOfSlot.length)));
    const { values, starts } = this.differing.sections();
    return { groupOfSlot, differing: values as Uint32Array, differingStarts: starts as Int32Array };
  }

  /** The groups whose members differ on one of `queryIndices`: for that query, their members score apart. */
  splitBy(queryIndices: ArrayLike<number>): Set<number> {
    const split = new Set<number>();
    for (let i = 0; i < queryIndices.length; i++) for (const group of this.groupsDifferingOn.get(queryIndices[i]!) ?? []) split.add(group);
    return split;
  }

  /** One past the last slot that scores as `slot` does for a query that `split` its groups (splitBy). */
  sameScoreUntil(slot: number, split: ReadonlySet<number>): number {
    const group = slot < this.groupOfSlot.length ? this.groupOfSlot[slot]! : -1;
    return group < 0 || split.has(group) ? slot + 1 : this.ends[group]!;
  }

  /** Renumbers the slots as a compaction does (kept slots in order, through `newSlotOf`); groups stay runs. */
  compact(isDeleted: Uint8Array, newSlotOf: Int32Array, slotCount: number): void {
    const kept = new Int32Array(slotCount).fill(-1);
    let count = 0;
    for (let slot = 0; slot < slotCount; slot++) {
      if (isDeleted[slot] === 1) continue;
      kept[newSlotOf[slot]!] = slot < this.groupOfSlot.length ? this.groupOfSlot[slot]! : -1;
      count++;
    }
    this.groupOfSlot = kept.slice(0, count);
    this.ends = endsOf(this.groupOfSlot, this.differing.length);
  }
}

function endsOf(groupOfSlot: Int32Array<ArrayBufferLike>, groupCount: number): Int32Array {
  const ends = new Int32Array(groupCount);
  groupOfSlot.forEach((group, slot) => {
    if (group >= 0) ends[group] = slot + 1;
  });
  return ends;
}
