type Storage = Uint8Array<ArrayBufferLike> | Uint32Array<ArrayBufferLike>;

/**
 * Rows of varying length packed end to end in one typed array: row r is values[starts[r] .. starts[r + 1]).
 * At 100k rows this replaces 100k small arrays or strings, and their per-object overhead, with two
 * allocations; rows are only appended, and compaction drops the rows no longer needed.
 */
export class RaggedArray<T extends Storage> {
  private values: T;
  private starts: Int32Array<ArrayBufferLike> = new Int32Array(64);
  private rows = 0;

  constructor(make: new (length: number) => T) {
    this.values = new make(1024);
  }

  /** Rows as `sections` gave them (e.g. read from a file): the arrays are used in place, not copied. */
  static fromSections<T extends Storage>(make: new (length: number) => T, values: T, starts: Int32Array<ArrayBufferLike>): RaggedArray<T> {
    const array = new RaggedArray(make);
    array.values = values;
    array.starts = starts;
    array.rows = starts.length - 1;
    return array;
  }

  /** The rows as two arrays (values, and where each row starts plus the end), trimmed to what is stored. */
  sections(): { values: T; starts: Int32Array<ArrayBufferLike> } {
    return { values: this.values.subarray(0, this.starts[this.rows]!) as T, starts: this.starts.subarray(0, this.rows + 1) };
  }

  get length(): number {
    return this.rows;
  }

  /** Appends a row and returns its number. */
  push(row: ArrayLike<number>): number {
    const start = this.starts[this.rows]!;
    if (start + row.length > this.values.length) this.values = this.grown(this.values, start + row.length);
    this.values.set(row, start);
    if (this.rows + 2 > this.starts.length) this.starts = this.grown(this.starts, this.rows + 2);
    this.rows++;
    this.starts[this.rows] = start + row.length;
    return this.rows - 1;
  }

  /** A view of the row, valid until the next push or compaction. */
  at(row: number): T {
    return this.values.subarray(this.starts[row]!, this.starts[row + 1]!) as T;
  }

  /** A new array holding the rows `order` names, in that order, sized to fit. */
  reordered(order: ArrayLike<number>): RaggedArray<T> {
    const starts = new Int32Array(order.length + 1);
    for (let row = 0; row < order.length; row++) starts[row + 1] = starts[row]! + this.starts[order[row]! + 1]! - this.starts[order[row]!]!;
    const values = new (this.values.constructor as new (length: number) => T)(starts[order.length]!);
    for (let row = 0; row < order.length; row++) values.set(this.at(order[row]!), starts[row]);
    return RaggedArray.fromSections(this.values.constructor as new (length: number) => T, values, starts);
  }

  /** Keeps the rows `keep` accepts, renumbered in order. */
  compact(keep: (row: number) => boolean): void {
    let kept = 0;
    let end = 0;
    for (let row = 0; row < this.rows; row++) {
      if (!keep(row)) continue;
      const start = this.starts[row]!;
      const length = this.starts[row + 1]! - start;
      this.values.copyWithin(end, start, start + length);
      end += length;
      kept++;
      this.starts[kept] = end;
    }
    this.rows = kept;
  }

  /** Gives back the spare capacity kept for appends. */
  trimToSize(): void {
    this.values = this.values.slice(0, this.starts[this.rows]!) as T;
    this.starts = this.starts.slice(0, this.rows + 1);
  }

  private grown<A extends Storage | Int32Array<ArrayBufferLike>>(array: A, atLeast: number): A {
    const bigger = new (array.constructor as new (length: number) => A)(Math.max(atLeast, Math.ceil(array.length * 1.5)));
    bigger.set(array);
    return bigger;
  }
}
