import type { PageBox } from '../domain.ts';
import { RaggedArray } from '../ragged-array.ts';

/** What a hit shows of a chunk. */
export interface ChunkPayload {
  source: string;
  headingPath: string;
  chunkIndex: number;
  text: string;
  groups: readonly string[];
  /** See Chunk.pages; absent (or empty) for a chunk without pages. */
  pages?: readonly number[] | undefined;
  /** See Chunk.boxes; absent for a chunk without boxes. */
  boxes?: readonly PageBox[] | undefined;
}

/** A payload as it arrives: texts as strings (a write) or as the UTF-8 bytes a table column holds (a load). */
export interface ChunkPayloadInput extends Omit<ChunkPayload, 'text' | 'headingPath' | 'pages' | 'boxes'> {
  text: string | Uint8Array;
  headingPath: string | Uint8Array;
  /** A table column's row, or the chunk's own list. */
  pages?: ArrayLike<number> | undefined;
  /** The chunk's own boxes, or a table column's row: their JSON as UTF-8 bytes. */
  boxes?: readonly PageBox[] | Uint8Array | undefined;
}

/** ChunkPayloads.toSections: one row per id, in the ids' order, plus the interned sources and groups. */
export interface ChunkPayloadSections {
  texts: Uint8Array;
  textStarts: Int32Array;
  headingPaths: Uint8Array;
  headingPathStarts: Int32Array;
  chunkIndexes: Int32Array;
  sourceNumbers: Int32Array;
  groupsNumbers: Int32Array;
  pages: Uint32Array;
  pageStarts: Int32Array;
  boxes: Uint8Array;
  boxStarts: Int32Array;
  sources: string[];
  groupLists: string[][];
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * The payloads of the chunks a search view holds, packed: texts and heading paths as UTF-8 bytes in two
 * ragged arrays (decoded only for the hits shown), sources and groups interned, one row per chunk. At
 * 100k chunks, one object and two strings per chunk cost about twice the texts' own size in V8's heap.
 *
 * Rows are only appended: a chunk written again takes a new row and its old one stays unused until the
 * view is next loaded from the table. Only processes that both write and search (tests, the eval) do so.
 */
export class ChunkPayloads {
  private readonly rowOf = new Map<string, number>();
  private texts = new RaggedArray<Uint8Array<ArrayBufferLike>>(Uint8Array);
  private headingPaths = new RaggedArray<Uint8Array<ArrayBufferLike>>(Uint8Array);
  /** Each row's pages, [] for a chunk without pages: most chunks of most collections, a few bytes each. */
  private pages = new RaggedArray<Uint32Array<ArrayBufferLike>>(Uint32Array);
  /** Each row's boxes as JSON in UTF-8, empty for a chunk without boxes; parsed only for the hits shown. */
  private boxes = new RaggedArray<Uint8Array<ArrayBufferLike>>(Uint8Array);
  private chunkIndexOfRow: number[] = [];
  private sourceOfRow: number[] = [];
  private groupsOfRow: number[] = [];
  private readonly sources = new Interned<string>((source) => source);
  // JSON, not a join: a group named "a\nb" must not share a number with the two groups a and b.
  private readonly groupLists = new Interned<readonly string[]>((groups) => JSON.stringify(groups));

  /** Payloads from toSections' arrays, row i being ids[i]'s; the byte arrays are used in place. */
  static fromSections(ids: readonly string[], sections: ChunkPayloadSections): ChunkPayloads {
    const payloads = new ChunkPayloads();
    ids.forEach((id, row) => payloads.rowOf.set(id, row));
    payloads.texts = RaggedArray.fromSections(Uint8Array, sections.texts, sections.textStarts);
    payloads.headingPaths = RaggedArray.fromSections(Uint8Array, sections.headingPaths, sections.headingPathStarts);
    payloads.pages = RaggedArray.fromSections(Uint32Array, sections.pages, sections.pageStarts);
    payloads.boxes = RaggedArray.fromSections(Uint8Array, sections.boxes, sections.boxStarts);
    payloads.chunkIndexOfRow = Array.from(sections.chunkIndexes);
    payloads.sourceOfRow = Array.from(sections.sourceNumbers);
    payloads.groupsOfRow = Array.from(sections.groupsNumbers);
    sections.sources.forEach((source) => payloads.sources.numberOf(source));
    sections.groupLists.forEach((groups) => payloads.groupLists.numberOf(groups));
    return payloads;
  }

  /**
   * `ids` (all held) in the order of their rows, and for each of the given ids its position in that order:
   * toSections of ids in row order copies nothing when they are every row.
   */
  rowOrder(ids: readonly string[]): { ids: string[]; slotRows: Int32Array } {
    const rows = Int32Array.from(ids, (id) => this.rowOf.get(id)!);
    const byRow = Int32Array.from(ids.keys()).sort((a, b) => rows[a]! - rows[b]!);
    const slotRows = new Int32Array(ids.length);
    byRow.forEach((position, rank) => (slotRows[position] = rank));
    return { ids: Array.from(byRow, (position) => ids[position]!), slotRows };
  }

  /** The payloads of `ids`, which must all be held, as flat arrays in that order. */
  toSections(ids: readonly string[]): ChunkPayloadSections {
    const inOrder = ids.length === this.texts.length && ids.every((id, row) => this.rowOf.get(id) === row);
    const rows = inOrder ? undefined : ids.map((id) => this.rowOf.get(id)!);
    const packed = <T extends Uint8Array<ArrayBufferLike> | Uint32Array<ArrayBufferLike>>(column: RaggedArray<T>, make: new (length: number) => T) => {
      if (!rows) return column.sections();
      const reordered = new RaggedArray<T>(make);
      for (const row of rows) reordered.push(column.at(row));
      return reordered.sections();
    };
    const pick = (values: number[]) => Int32Array.from(rows ?? values.keys(), (row) => values[row]!);
    const texts = packed(this.texts, Uint8Array);
    const headingPaths = packed(this.headingPaths, Uint8Array);
    const pages = packed(this.pages, Uint32Array);
    const boxes = packed(this.boxes, Uint8Array);
    return {
      texts: texts.values,
      textStarts: texts.starts,
      headingPaths: headingPaths.values,
      headingPathStarts: headingPaths.starts,
      chunkIndexes: pick(this.chunkIndexOfRow),
      sourceNumbers: pick(this.sourceOfRow),
      groupsNumbers: pick(this.groupsOfRow),
      pages: pages.values,
      pageStarts: pages.starts,
      boxes: boxes.values,
      boxStarts: boxes.starts,
      sources: this.sources.all(),
      groupLists: this.groupLists.all().map((groups) => [...groups]),
    };
  }

  set(id: string, payload: ChunkPayloadInput): void {
    const row = this.texts.push(asBytes(payload.text));
    this.headingPaths.push(asBytes(payload.headingPath));
    this.pages.push(payload.pages ?? []);
    this.boxes.push(boxesBytes(payload.boxes));
    this.chunkIndexOfRow.push(payload.chunkIndex);
    this.sourceOfRow.push(this.sources.numberOf(payload.source));
    this.groupsOfRow.push(this.groupLists.numberOf(payload.groups));
    this.rowOf.set(id, row);
  }

  get(id: string): ChunkPayload | undefined {
    const row = this.rowOf.get(id);
    if (row === undefined) return undefined;
    return {
      source: this.sources.value(this.sourceOfRow[row]!),
      headingPath: decoder.decode(this.headingPaths.at(row)),
      chunkIndex: this.chunkIndexOfRow[row]!,
      text: decoder.decode(this.texts.at(row)),
      groups: this.groupLists.value(this.groupsOfRow[row]!),
      ...(this.pages.at(row).length > 0 ? { pages: Array.from(this.pages.at(row)) } : {}),
      ...(this.boxes.at(row).length > 0 ? { boxes: JSON.parse(decoder.decode(this.boxes.at(row))) as PageBox[] } : {}),
    };
  }

  /** True while no chunk has ever been given groups: searches then need no visibility test at all. */
  get everyChunkPublic(): boolean {
    return this.groupLists.every((groups) => groups.length === 0);
  }

  /** The chunk's groups without decoding anything: what the visibility test of every scored chunk needs. */
  groupsOf(id: string): readonly string[] | undefined {
    const row = this.rowOf.get(id);
    return row === undefined ? undefined : this.groupLists.value(this.groupsOfRow[row]!);
  }

  delete(id: string): void {
    this.rowOf.delete(id);
  }

  /** The chunk's source without decoding anything: what a search filter's test of every scored chunk needs. */
  sourceOf(id: string): string | undefined {
    const row = this.rowOf.get(id);
    return row === undefined ? undefined : this.sources.value(this.sourceOfRow[row]!);
  }

  /** Every source a chunk was ever held for (a search filter resolves against them). */
  allSources(): string[] {
    return this.sources.all();
  }

  idsOfSource(source: string): string[] {
    const wanted = this.sources.find(source);
    if (wanted === undefined) return [];
    return [...this.rowOf].filter(([, row]) => this.sourceOfRow[row] === wanted).map(([id]) => id);
  }

  setGroupsOfSource(source: string, groups: readonly string[]): void {
    const number = this.groupLists.numberOf(groups);
    for (const id of this.idsOfSource(source)) this.groupsOfRow[this.rowOf.get(id)!] = number;
  }

  /** Gives back the spare capacity kept for appends: after a bulk load. */
  trimToSize(): void {
    this.texts.trimToSize();
    this.headingPaths.trimToSize();
    this.pages.trimToSize();
    this.boxes.trimToSize();
  }
}

function boxesBytes(boxes: readonly PageBox[] | Uint8Array | undefined): Uint8Array {
  if (boxes instanceof Uint8Array) return boxes;
  return boxes?.length ? encoder.encode(JSON.stringify(boxes)) : new Uint8Array(0);
}

function asBytes(text: string | Uint8Array): Uint8Array {
  return typeof text === 'string' ? encoder.encode(text) : text;
}

/** Equal values stored once: the many chunks of a document share its source and its groups. */
class Interned<T> {
  private readonly values: T[] = [];
  private readonly numbers = new Map<string, number>();

  constructor(private readonly keyOf: (value: T) => string) {}

  numberOf(value: T): number {
    const key = this.keyOf(value);
    let number = this.numbers.get(key);
    if (number === undefined) {
      number = this.values.push(value) - 1;
      this.numbers.set(key, number);
    }
    return number;
  }

  value(number: number): T {
    return this.values[number]!;
  }

  /** The value's number if it is stored; nothing is added. */
  find(value: T): number | undefined {
    return this.numbers.get(this.keyOf(value));
  }

  every(predicate: (value: T) => boolean): boolean {
    return this.values.every(predicate);
  }

  /** Every value, by number. */
  all(): T[] {
    return [...this.values];
  }
}
