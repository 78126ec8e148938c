export interface SparseMatch {
  id: string;
  score: number;
}

/** Best first; equal scores by id ascending (Qdrant leaves such ties unordered). */
export function ranksAbove(score: number, id: string, other: SparseMatch): boolean {
  return score > other.score || (score === other.score && id < other.id);
}

function isBetter(a: SparseMatch, b: SparseMatch): boolean {
  return ranksAbove(a.score, a.id, b);
}

/** Keeps the `limit` best matches offered, through a bounded min-heap (root = worst kept). */
export class BestMatches {
  private readonly heap: SparseMatch[] = [];

  constructor(private readonly limit: number) {}

  /** The score a match must reach to enter (equal scores enter by a smaller id); -Infinity until full. */
  get threshold(): number {
    return this.heap.length < this.limit ? -Infinity : this.heap[0]!.score;
  }

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
