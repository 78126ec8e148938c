import type { RecordBatch, Vector } from 'apache-arrow';

/**
 * Column access on an Arrow record batch without materialising rows. `toArray()` turns each row into
 * an object and each list into a JS array; at 100k chunks that was seconds and a gigabyte of garbage,
 * where reading the columns' own buffers is a few hundred milliseconds.
 */
export function columnOf(batch: RecordBatch, name: string): Vector {
  const column = batch.getChild(name);
  if (column === null) throw new Error(`the table has no column ${name}`);
  return column;
}

/**
 * A column of variable-width rows (a List of numbers, or Utf8 as its UTF-8 bytes): each row is a view
 * into the column's value buffer, no copy, valid while the batch is.
 */
export class VariableWidthColumn<Values extends Uint8Array | Uint32Array | Int32Array | Float32Array> {
  private readonly offsets: Int32Array;
  private readonly values: Values;
  /** The batch's first row in `offsets` (a sliced column starts past 0). */
  private readonly firstRow: number;
  /** Where the list's child values start in `values` (0 for Utf8, whose bytes are the column's own). */
  private readonly valuesStart: number;

  constructor(batch: RecordBatch, name: string) {
    const column = columnOf(batch, name);
    if (column.data.length !== 1) throw new Error(`column ${name} has ${column.data.length} chunks in one batch`);
    const data = column.data[0]!;
    const child = data.children[0];
    this.offsets = data.valueOffsets as Int32Array;
    this.firstRow = data.offset;
    this.values = (child ? child.values : data.values) as Values;
    this.valuesStart = child ? child.offset : 0;
  }

  /** The row's number of values (bytes for Utf8), without reading them: 0 for an empty or a null row. */
  rowLength(index: number): number {
    return this.offsets[this.firstRow + index + 1]! - this.offsets[this.firstRow + index]!;
  }

  row(index: number): Values {
    const position = this.firstRow + index;
    return this.values.subarray(this.valuesStart + this.offsets[position]!, this.valuesStart + this.offsets[position + 1]!) as Values;
  }
}

/**
 * A nullable List<Utf8> column (the access groups) read as string lists, null and empty rows as []. Most
 * chunks are public, and skipping Arrow's decoding for their empty rows is most of a no-op re-run's reading.
 */
export class StringListColumn {
  private readonly column: Vector;
  private readonly lengths: VariableWidthColumn<Uint8Array>;

  constructor(batch: RecordBatch, name: string) {
    this.column = columnOf(batch, name);
    this.lengths = new VariableWidthColumn(batch, name);
  }

  row(index: number): string[] {
    if (this.lengths.rowLength(index) === 0) return [];
    const value = this.column.get(index) as Iterable<string> | null;
    return value === null ? [] : Array.from(value);
  }
}
