import { PostingList } from './posting-list.ts';

/**
 * A sparse index's posting lists by index. Those of a saved index stay as its flat sections (views of the
 * file's buffer) until one is used: a search builds only its query's lists. A 115k-chunk view holds 215k
 * lists, most of them a few postings long, and one object and two typed-array views for each cost 60 MiB of
 * heap, a second of start-up, and major collections that scan them all (issue 30).
 */
export class PostingLists {
  private readonly lists = new Map<number, PostingList>();
  /** The saved lists not yet built: list k of `terms[k]` is slots/weights[listStarts[k] .. listStarts[k + 1]). */
  private saved: { terms: Uint32Array; listStarts: Int32Array; slots: Int32Array; weights: Float32Array } | undefined;

  /** Takes a saved index's sections (toSections' `terms`, `listStarts`, `slots`, `weights`), used in place. */
  loadSaved(terms: Uint32Array, listStarts: Int32Array, slots: Int32Array, weights: Float32Array): void {
    this.lists.clear();
    this.saved = { terms, listStarts, slots, weights };
  }

  get(index: number): PostingList | undefined {
    return this.lists.get(index) ?? this.build(index);
  }

  getOrCreate(index: number): PostingList {
    let list = this.get(index);
    if (list === undefined) {
      list = new PostingList();
      this.lists.set(index, list);
    }
    return list;
  }

  /** Every list, the saved ones built first: for what walks them all (compaction, clustering, saving). */
  all(): Map<number, PostingList> {
    if (this.saved) {
      const { terms } = this.saved;
      for (let k = 0; k < terms.length; k++) if (!this.lists.has(terms[k]!)) this.build(terms[k]!);
      this.saved = undefined;
    }
    return this.lists;
  }

  /** The lists built so far (a saved list not yet used is as small as it gets). */
  built(): IterableIterator<PostingList> {
    return this.lists.values();
  }

  get builtCount(): number {
    return this.lists.size;
  }

  private build(index: number): PostingList | undefined {
    if (!this.saved) return undefined;
    const { terms, listStarts, slots, weights } = this.saved;
    const k = indexOfSorted(terms, index);
    if (k < 0) return undefined;
    const list = PostingList.fromSorted(slots.subarray(listStarts[k], listStarts[k + 1]), weights.subarray(listStarts[k], listStarts[k + 1]));
    this.lists.set(index, list);
    return list;
  }
}

/** Where `value` is in the ascending `sorted`, or -1. */
function indexOfSorted(sorted: Uint32Array, value: number): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = sorted[middle]!;
    if (at === value) return middle;
    if (at < value) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}
