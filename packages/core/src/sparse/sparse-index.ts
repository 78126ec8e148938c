import type { SparseVector } from '../domain.ts';
import { BestMatches, type SparseMatch } from './best-matches.ts';
import { RaggedArray } from '../ragged-array.ts';
import type { PostingList } from './posting-list.ts';
import { PostingLists } from './posting-lists.ts';
import { seedThreshold, type QueryTerm } from './seed-threshold.ts';
import { minHashKey, nearDuplicateOrder, splitGroups } from './near-duplicate-order.ts';
import { ForwardIndex } from './forward-index.ts';
import { DuplicateGroups, type DuplicateGroupSections } from './duplicate-groups.ts';

export type { SparseMatch } from './best-matches.ts';

/** SparseIndex.toSections: postings concatenated by index, then each slot's distinct indices. */
export interface SparseIndexSections {
  ids: readonly string[];
  /** The sparse indices that have a posting list, ascending; list k is slots/weights[listStarts[k] .. listStarts[k + 1]). */
  terms: Uint32Array;
  listStarts: Int32Array;
  slots: Int32Array;
  weights: Float32Array;
  /** Slot s holds slotTerms[slotTermStarts[s] .. slotTermStarts[s + 1]). */
  slotTerms: Uint32Array;
  slotTermStarts: Int32Array;
  /** The near-duplicate groups (clusterNearDuplicates); absent in an index never clustered. */
  groupOfSlot?: DuplicateGroupSections['groupOfSlot'];
  differing?: DuplicateGroupSections['differing'];
  differingStarts?: DuplicateGroupSections['differingStarts'];
}

/** A sparse vector as plain arrays (SparseVector) or typed ones. */
export interface SparseVectorLike {
  indices: ArrayLike<number>;
  values: ArrayLike<number>;
}

/**
 * Qdrant's IDF for a sparse vector with `modifier: "idf"`: `fancy_idf(n, df) = ln((n - df + 0.5) / (df + 0.5) + 1)`,
 * n = vectors in the collection, df = vectors holding the dimension; it multiplies the query weight.
 * https://github.com/qdrant/qdrant/blob/master/lib/segment/src/data_types/query_context.rs (`fancy_idf`, `remap_idf_weights`)
 * Qdrant computes in f32; we keep f64, so scores agree to about 1e-7 relative.
 */
export function qdrantIdf(documentCount: number, documentFrequency: number): number {
  return Math.log((documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5) + 1);
}

/** Past the last slot of a list: above every slot, which is an Int32. */
const NO_SLOT = 0x7fffffff;

/**
 * An index held by more than this share of the documents, and by more than COMMON_FLOOR, does not name
 * near-duplicates (near-duplicate-order.ts). The floor keeps a small collection's indices all naming ones.
 */
const COMMON_SHARE = 0.05;
const COMMON_FLOOR = 64;
/** Two documents are near-duplicates when their vectors differ in at most this many indices (a version, a path segment). */
const NEAR_DUPLICATE_DIFFERENCES = 8;

/** Compaction waits for at least this many tombstoned postings or slots, so small edits stay cheap. */
const MIN_GARBAGE_TO_COMPACT = 1024;

/**
 * Bounds are sums in a different order from the exact score, so they may round below it; a candidate
 * is pruned only when its bound misses the threshold by more than this share of the summed magnitudes.
 */
const BOUND_SLACK = 1e-9;

/**
 * In-memory sparse index scoring exactly as Qdrant does for a sparse vector with `modifier: "idf"`:
 * score(doc) = Σ over query indices present in doc of query_value × idf(index) × doc_value.
 * Every upserted vector counts in N, the empty one included.
 *
 * Each document takes a dense slot; each index keeps its documents as a slot-sorted posting list
 * of typed arrays. A delete only marks the slot (a tombstone); once tombstones pile up, every list
 * is compacted and the slots renumbered. A search walks the lists document by document with
 * MaxScore (Turtle & Flood 1995): terms whose summed upper bounds cannot reach the k-th best score
 * no longer propose candidates, and a candidate is dropped as soon as its bound falls short.
 *
 * Before serving (or being saved), clusterNearDuplicates renumbers the slots so that near-identical
 * documents (the same page in 22 versions, say) sit side by side in groups; a search scores a group
 * once for all its members when the query holds none of the indices they differ on.
 */
export class SparseIndex {
  private readonly postings = new PostingLists();
  private readonly slotOf = new Map<string, number>();
  /** Row s: the distinct indices slot s holds, for what a delete takes back from the document frequencies. */
  private termsOfSlots = new RaggedArray<Uint32Array<ArrayBufferLike>>(Uint32Array);
  private idOfSlot: string[] = [];
  private deleted = new Uint8Array(64);
  private groups = DuplicateGroups.none();
  private deletedSlots = 0;
  private deletedPostings = 0;
  private storedPostings = 0;

  /** `minGarbageToCompact`: tombstones tolerated before a compaction (tests lower it to exercise compaction). */
  constructor(private readonly minGarbageToCompact = MIN_GARBAGE_TO_COMPACT) {}

  get size(): number {
    return this.slotOf.size;
  }

  /** How many posting lists are built as objects: a saved index's lists are built on first use (posting-lists.ts). */
  get builtPostingLists(): number {
    return this.postings.builtCount;
  }

  /** How many groups of near-duplicates the last clusterNearDuplicates found (and kept). */
  get nearDuplicateGroupCount(): number {
    return this.groups.count;
  }

  /** How many slots those groups hold. */
  get nearDuplicateGroupedDocuments(): number {
    return this.groups.groupedSlots;
  }

  /**
   * The index as flat arrays, in slot order (`ids[s]` is the document in slot s), for a file that
   * fromSections reads back. Tombstones are compacted away first, so the slots are 0..size-1.
   */
  toSections(): SparseIndexSections {
    if (this.deletedSlots > 0) this.compact();
    const lists = [...this.postings.all()].sort(([a], [b]) => a - b);
    const listStarts = new Int32Array(lists.length + 1);
    lists.forEach(([, list], k) => (listStarts[k + 1] = listStarts[k]! + list.length));
    const slots = new Int32Array(listStarts[lists.length]!);
    const weights = new Float32Array(slots.length);
    lists.forEach(([, list], k) => {
      slots.set(list.slots.subarray(0, list.length), listStarts[k]);
      weights.set(list.weights.subarray(0, list.length), listStarts[k]);
    });
    const { values: slotTerms, starts: slotTermStarts } = this.termsOfSlots.sections();
    const groups = this.groups.sections(this.idOfSlot.length);
    return { ids: [...this.idOfSlot], terms: Uint32Array.from(lists, ([index]) => index), listStarts, slots, weights, slotTerms, slotTermStarts, ...groups };
  }

  /** An index from toSections' arrays, which it uses in place (views of a file's buffer): no copy, no sorting, each list built on first use. */
  static fromSections(sections: SparseIndexSections, minGarbageToCompact = MIN_GARBAGE_TO_COMPACT): SparseIndex {
    const index = new SparseIndex(minGarbageToCompact);
    const { ids, terms, listStarts, slots, weights } = sections;
    index.postings.loadSaved(terms, listStarts, slots, weights);
    ids.forEach((id, slot) => index.slotOf.set(id, slot));
    index.idOfSlot = [...ids];
    index.deleted = new Uint8Array(Math.max(64, ids.length * 2));
    index.termsOfSlots = RaggedArray.fromSections(Uint32Array, sections.slotTerms, sections.slotTermStarts);
    index.storedPostings = sections.slotTerms.length;
    const { groupOfSlot, differing, differingStarts } = sections;
    if (groupOfSlot && differing && differingStarts) index.groups = DuplicateGroups.fromSections({ groupOfSlot, differing, differingStarts });
    return index;
  }

  /** Takes plain arrays or typed ones (rows read from a table's columns); it keeps no reference to them. */
  upsert(id: string, vector: SparseVectorLike): void {
    if (vector.indices.length !== vector.values.length) {
      throw new Error(`sparse vector of ${id}: ${vector.indices.length} indices but ${vector.values.length} values`);
    }
    this.delete(id);
    const slot = this.allocateSlot(id);
    this.slotOf.set(id, slot);
    this.termsOfSlots.push(sortedUnique(vector.indices));
    for (let i = 0; i < vector.indices.length; i++) this.postingOf(vector.indices[i]!).append(slot, vector.values[i]!);
    this.storedPostings += this.termsOfSlots.at(slot).length;
  }

  /**
   * Renumbers the live documents so that near-duplicates take consecutive slots, in groups that a search
   * scores once (near-duplicate-order.ts, duplicate-groups.ts), dropping tombstones. Results are unchanged.
   * For an index about to serve or be saved; documents upserted later take slots at the end until the next call.
   */
  clusterNearDuplicates(): void {
    const isLive = new Uint8Array(this.idOfSlot.length);
    for (const slot of this.slotOf.values()) isLive[slot] = 1;
    const liveSlots = Int32Array.from(this.slotOf.values()).sort();
    const commonAbove = Math.max(COMMON_FLOOR, this.slotOf.size * COMMON_SHARE);
    const postings = this.postings.all();
    const isCommon = (index: number) => postings.get(index)!.documentFrequency > commonAbove;
    const forward = new ForwardIndex(this.termsOfSlots, postings, isLive);
    const sketched = nearDuplicateOrder(liveSlots, (slot) => minHashKey(this.termsOfSlots.at(slot), isCommon));
    const { order, groupStarts } = splitGroups(sketched, (representative, slot) => forward.differsInAtMost(representative, slot, NEAR_DUPLICATE_DIFFERENCES));
    this.groups = DuplicateGroups.build(order, groupStarts, forward);
    this.renumber(order, isLive);
  }

  /** Slot order[i] becomes slot i in every list and row; the slots `isLive` does not mark are dropped. */
  private renumber(order: Int32Array, isLive: Uint8Array): void {
    const newSlotOf = new Int32Array(this.idOfSlot.length);
    order.forEach((slot, newSlot) => (newSlotOf[slot] = newSlot));
    const postings = this.postings.all();
    let longest = 0;
    for (const list of postings.values()) longest = Math.max(longest, list.length);
    const scratch = new Float64Array(longest);
    for (const [index, list] of postings) {
      list.renumber(newSlotOf, isLive, scratch);
      if (list.length === 0) postings.delete(index);
    }
    this.termsOfSlots = this.termsOfSlots.reordered(order);
    this.idOfSlot = Array.from(order, (slot) => this.idOfSlot[slot]!);
    this.idOfSlot.forEach((id, slot) => this.slotOf.set(id, slot));
    this.deleted = new Uint8Array(Math.max(64, order.length * 2));
    this.storedPostings -= this.deletedPostings;
    this.deletedPostings = 0;
    this.deletedSlots = 0;
  }

  /** Gives back the spare capacity lists keep for appends: after a bulk load, to hold only what is stored. */
  trimToSize(): void {
    for (const list of this.postings.built()) list.trimToSize();
    this.termsOfSlots.trimToSize();
  }

  delete(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    this.slotOf.delete(id);
    this.deleted[slot] = 1;
    this.deletedSlots++;
    const terms = this.termsOfSlots.at(slot);
    for (const index of terms) this.postings.get(index)!.documentFrequency--;
    this.deletedPostings += terms.length;
    this.compactIfWorthIt();
  }

  /**
   * The `limit` best matches among the documents `isVisible` accepts (all by default). The others are
   * skipped while ranking, so they never take a place in the top `limit`, but still count in N and in
   * each index's document frequency, as in Qdrant, whose IDF is the whole collection's whatever the filter.
   */
  search(query: SparseVector, limit: number, isVisible?: (id: string) => boolean): SparseMatch[] {
    if (limit <= 0) return [];
    const terms = this.queryTerms(query);
    const best = new BestMatches(limit);
    const termCount = terms.length;
    // boundBelow[k]: the most terms[0..k) together add to a score (terms sorted by bound ascending).
    const boundBelow = new Float64Array(termCount + 1);
    for (let k = 0; k < termCount; k++) boundBelow[k + 1] = boundBelow[k]! + terms[k]!.bound;
    const byQueryPosition = terms.map((_, k) => k).sort((a, b) => terms[a]!.queryPosition - terms[b]!.queryPosition);
    const cursors = new Int32Array(termCount);
    const contributions = new Float64Array(termCount);
    // heldBy[k] === candidate: terms[k] holds the candidate (no per-candidate reset needed).
    const heldBy = new Int32Array(termCount).fill(-1);
    const isEligible = (slot: number) => this.deleted[slot] !== 1 && (isVisible === undefined || isVisible(this.idOfSlot[slot]!));
    const seed = seedThreshold(terms, byQueryPosition, limit, isEligible);
    let threshold = seed;
    let firstEssential = nonEssentialTerms(boundBelow, threshold, 0);
    // Hot loop: the lists and weights as plain locals rather than properties of the terms.
    const lists = terms.map((term) => term.list);
    const termWeights = Float64Array.from(terms, (term) => term.weight);
    const deleted = this.deleted;
    // heads[k]: the slot at terms[k]'s cursor (NO_SLOT past the end), so picking the next candidate reads one array.
    const heads = Int32Array.from(lists, (list) => (list.length > 0 ? list.slots[0]! : NO_SLOT));
    const split = this.groups.splitBy(query.indices);

    for (;;) {
      let candidate = NO_SLOT;
      for (let k = firstEssential; k < termCount; k++) if (heads[k]! < candidate) candidate = heads[k]!;
      if (candidate === NO_SLOT) break;
      // Slots candidate .. runEnd - 1 hold vectors identical on the query's indices: one score serves them all.
      const runEnd = this.groups.sameScoreUntil(candidate, split);

      let partial = 0;
      let magnitude = 0;
      for (let k = firstEssential; k < termCount; k++) {
        if (heads[k] !== candidate) continue;
        const list = lists[k]!;
        const cursor = cursors[k]!;
        const contribution = termWeights[k]! * list.weights[cursor]!;
        contributions[k] = contribution;
        heldBy[k] = candidate;
        partial += contribution;
        magnitude += Math.abs(contribution);
        cursors[k] = cursor + 1;
        heads[k] = cursor + 1 < list.length ? list.slots[cursor + 1]! : NO_SLOT;
      }
      // Every list holding one slot of the run holds them all: the essential ones move past the run at once.
      if (runEnd > candidate + 1) skipTo(runEnd, firstEssential, lists, cursors, heads);
      let pruned = runEnd === candidate + 1 && deleted[candidate] === 1;
      for (let k = firstEssential - 1; k >= 0 && !pruned; k--) {
        if (cannotReach(partial + boundBelow[k + 1]!, magnitude + boundBelow[k + 1]!, threshold)) {
          pruned = true;
          break;
        }
        const list = lists[k]!;
        const cursor = list.seek(cursors[k]!, candidate);
        cursors[k] = cursor;
        if (cursor < list.length && list.slots[cursor] === candidate) {
          const contribution = termWeights[k]! * list.weights[cursor]!;
          contributions[k] = contribution;
          heldBy[k] = candidate;
          partial += contribution;
          magnitude += Math.abs(contribution);
        }
      }
      if (!pruned && !cannotReach(partial, magnitude, threshold)) {
        let score = 0;
        for (const k of byQueryPosition) if (heldBy[k] === candidate) score += contributions[k]!;
        for (let slot = candidate; slot < runEnd; slot++) {
          const id = this.idOfSlot[slot]!;
          if (deleted[slot] !== 1 && (isVisible === undefined || isVisible(id))) best.offer(id, score);
        }
        threshold = Math.max(seed, best.threshold);
        firstEssential = nonEssentialTerms(boundBelow, threshold, firstEssential);
      }
    }
    return best.sorted();
  }

  /** The query's indices that some live document holds, with their weights and bounds, by bound ascending. */
  private queryTerms(query: SparseVector): QueryTerm[] {
    const terms: QueryTerm[] = [];
    query.indices.forEach((index, queryPosition) => {
      const list = this.postings.get(index);
      if (list === undefined || list.documentFrequency === 0) return;
      const weight = query.values[queryPosition]! * qdrantIdf(this.slotOf.size, list.documentFrequency);
      const bound = Math.max(0, weight * list.maxWeight, weight * list.minWeight);
      terms.push({ list, weight, bound, queryPosition });
    });
    return terms.sort((a, b) => a.bound - b.bound || a.queryPosition - b.queryPosition);
  }

  private allocateSlot(id: string): number {
    const slot = this.idOfSlot.length;
    this.idOfSlot.push(id);
    if (slot >= this.deleted.length) {
      const grown = new Uint8Array(this.deleted.length * 2);
      grown.set(this.deleted);
      this.deleted = grown;
    }
    return slot;
  }

  private postingOf(index: number): PostingList {
    return this.postings.getOrCreate(index);
  }

  /** Compacts once tombstones are a quarter of what is stored, so the work stays proportional to the edits. */
  private compactIfWorthIt(): void {
    const postingGarbage = this.deletedPostings >= Math.max(this.minGarbageToCompact, this.storedPostings / 4);
    const slotGarbage = this.deletedSlots >= Math.max(this.minGarbageToCompact, this.idOfSlot.length / 4);
    if (postingGarbage || slotGarbage) this.compact();
  }

  /** Drops tombstoned slots from every list and renumbers the live ones in order, which keeps each list sorted. */
  private compact(): void {
    const newSlotOf = new Int32Array(this.idOfSlot.length);
    const idOfSlot: string[] = [];
    for (let slot = 0; slot < this.idOfSlot.length; slot++) {
      if (this.deleted[slot] === 1) continue;
      newSlotOf[slot] = idOfSlot.length;
      idOfSlot.push(this.idOfSlot[slot]!);
    }
    const postings = this.postings.all();
    for (const [index, list] of postings) {
      list.compact(this.deleted, newSlotOf);
      if (list.length === 0) postings.delete(index);
    }
    for (const [id, slot] of this.slotOf) this.slotOf.set(id, newSlotOf[slot]!);
    this.groups.compact(this.deleted, newSlotOf, this.idOfSlot.length);
    const deleted = this.deleted;
    this.termsOfSlots.compact((slot) => deleted[slot] !== 1);
    this.idOfSlot = idOfSlot;
    this.deleted = new Uint8Array(Math.max(64, idOfSlot.length * 2));
    this.storedPostings -= this.deletedPostings;
    this.deletedPostings = 0;
    this.deletedSlots = 0;
  }
}

/** Moves the cursors of terms[from..] to their first slot at or past `slot`. */
function skipTo(slot: number, from: number, lists: readonly PostingList[], cursors: Int32Array, heads: Int32Array): void {
  for (let k = from; k < lists.length; k++) {
    if (heads[k]! >= slot) continue;
    const list = lists[k]!;
    const cursor = list.seek(cursors[k]!, slot);
    cursors[k] = cursor;
    heads[k] = cursor < list.length ? list.slots[cursor]! : NO_SLOT;
  }
}

function sortedUnique(indices: ArrayLike<number>): Uint32Array {
  const sorted = Uint32Array.from(indices).sort();
  let kept = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[kept++] = sorted[i]!;
  return sorted.subarray(0, kept);
}

/** How many of the weakest terms (at least `from`) cannot lift a document to `threshold` together: they only complete scores. */
function nonEssentialTerms(boundBelow: Float64Array, threshold: number, from: number): number {
  let count = from;
  while (count < boundBelow.length - 1 && cannotReach(boundBelow[count + 1]!, boundBelow[count + 1]!, threshold)) count++;
  return count;
}

function cannotReach(bound: number, magnitude: number, threshold: number): boolean {
  return bound + BOUND_SLACK * magnitude < threshold;
}
