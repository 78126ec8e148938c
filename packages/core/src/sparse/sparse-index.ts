import type { SparseVector } from '../domain.ts';

export interface SparseMatch {
  id: string;
  score: number;
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

/** Best first; equal scores by id ascending (Qdrant leaves such ties unordered). */
function ranksAbove(score: number, id: string, other: SparseMatch): boolean {
  return score > other.score || (score === other.score && id < other.id);
}

function isBetter(a: SparseMatch, b: SparseMatch): boolean {
  return ranksAbove(a.score, a.id, b);
}

/** Keeps the `limit` best matches offered, through a bounded min-heap (root = worst kept). */
class BestMatches {
  private readonly heap: SparseMatch[] = [];

  constructor(private readonly limit: number) {}

  offer(id: string, score: number): void {
    const heap = this.heap;
    if (heap.length < this.limit) {
      heap.push({ id, score });
      siftUp(heap, heap.length - 1);
    } else if (ranksAbove(score, id, heap[0]!)) {
      heap[0] = { id, score };
      siftDown(heap, 0);
    }
  }

  /** Best first. */
  sorted(): SparseMatch[] {
    return this.heap.sort((a, b) => (isBetter(a, b) ? -1 : 1));
  }
}

function siftUp(heap: SparseMatch[], index: number): void {
  let child = index;
  while (child > 0) {
    const parent = (child - 1) >> 1;
    if (!isBetter(heap[parent]!, heap[child]!)) return;
    [heap[parent], heap[child]] = [heap[child]!, heap[parent]!];
    child = parent;
  }
}

function siftDown(heap: SparseMatch[], index: number): void {
  let parent = index;
  for (;;) {
    let worst = parent;
    for (const child of [2 * parent + 1, 2 * parent + 2]) {
      if (child < heap.length && isBetter(heap[worst]!, heap[child]!)) worst = child;
    }
    if (worst === parent) return;
    [heap[parent], heap[worst]] = [heap[worst]!, heap[parent]!];
    parent = worst;
  }
}

/** The documents holding one index: a Map to edit, packed into arrays lazily to scan. */
class Posting {
  private readonly entries = new Map<number, number>();
  private cache: { slots: Int32Array; values: Float64Array } | undefined;

  get size(): number {
    return this.entries.size;
  }

  add(slot: number, value: number): void {
    this.entries.set(slot, value);
    this.cache = undefined;
  }

  remove(slot: number): void {
    this.entries.delete(slot);
    this.cache = undefined;
  }

  packed(): { slots: Int32Array; values: Float64Array } {
    if (this.cache === undefined) {
      this.cache = { slots: Int32Array.from(this.entries.keys()), values: Float64Array.from(this.entries.values()) };
    }
    return this.cache;
  }
}

/**
 * In-memory sparse index scoring exactly as Qdrant does for a sparse vector with `modifier: "idf"`:
 * score(doc) = Σ over query indices present in doc of query_value × idf(index) × doc_value.
 * Every upserted vector counts in N, the empty one included.
 * Postings are keyed by a dense slot per id, and packed into typed arrays on first read after a
 * change, so a query scans arrays and accumulates into a typed array instead of string-keyed Maps.
 */
export class SparseIndex {
  private readonly postings = new Map<number, Posting>();
  private readonly documents = new Map<string, { slot: number; indices: readonly number[] }>();
  private readonly idOfSlot: string[] = [];
  private readonly freeSlots: number[] = [];
  private scores = new Float64Array(0);

  get size(): number {
    return this.documents.size;
  }

  upsert(id: string, vector: SparseVector): void {
    if (vector.indices.length !== vector.values.length) {
      throw new Error(`sparse vector of ${id}: ${vector.indices.length} indices but ${vector.values.length} values`);
    }
    this.delete(id);
    const slot = this.allocateSlot(id);
    this.documents.set(id, { slot, indices: [...vector.indices] });
    vector.indices.forEach((index, i) => this.postingOf(index).add(slot, vector.values[i]!));
  }

  delete(id: string): void {
    const document = this.documents.get(id);
    if (document === undefined) return;
    this.documents.delete(id);
    this.freeSlots.push(document.slot);
    for (const index of document.indices) {
      const posting = this.postings.get(index);
      posting?.remove(document.slot);
      if (posting?.size === 0) this.postings.delete(index);
    }
  }

  /**
   * The `limit` best matches among the documents `isVisible` accepts (all by default). The others are
   * skipped while ranking, so they never take a place in the top `limit`, but still count in N and in
   * each index's document frequency, as in Qdrant, whose IDF is the whole collection's whatever the filter.
   */
  search(query: SparseVector, limit: number, isVisible?: (id: string) => boolean): SparseMatch[] {
    if (limit <= 0) return [];
    const best = new BestMatches(limit);
    for (const slot of this.accumulate(query)) {
      const id = this.idOfSlot[slot]!;
      if (isVisible === undefined || isVisible(id)) best.offer(id, this.scores[slot]!);
      this.scores[slot] = 0;
    }
    return best.sorted();
  }

  /** Adds each matching document's score into `this.scores`; returns the slots touched. */
  private accumulate(query: SparseVector): number[] {
    const touched: number[] = [];
    const seen = new Uint8Array(this.scores.length);
    query.indices.forEach((index, i) => {
      const posting = this.postings.get(index);
      if (posting === undefined) return;
      const weight = query.values[i]! * qdrantIdf(this.documents.size, posting.size);
      const { slots, values } = posting.packed();
      for (let j = 0; j < slots.length; j++) {
        const slot = slots[j]!;
        if (seen[slot] === 0) {
          seen[slot] = 1;
          touched.push(slot);
        }
        this.scores[slot] = this.scores[slot]! + weight * values[j]!;
      }
    });
    return touched;
  }

  private allocateSlot(id: string): number {
    const slot = this.freeSlots.pop() ?? this.idOfSlot.length;
    this.idOfSlot[slot] = id;
    if (slot >= this.scores.length) {
      const grown = new Float64Array(Math.max(64, this.scores.length * 2));
      grown.set(this.scores);
      this.scores = grown;
    }
    return slot;
  }

  private postingOf(index: number): Posting {
    let posting = this.postings.get(index);
    if (posting === undefined) {
      posting = new Posting();
      this.postings.set(index, posting);
    }
    return posting;
  }
}
