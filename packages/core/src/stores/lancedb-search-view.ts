import type { Table } from '@lancedb/lancedb';
import type { RecordBatch } from 'apache-arrow';
import { isVisibleTo, normalizeGroups } from '../access/groups.ts';
import type { IndexedChunk, SearchHit, SparseVector } from '../domain.ts';
import { RagError } from '../errors.ts';
import { SparseIndex, type SparseIndexSections, type SparseMatch } from '../sparse/sparse-index.ts';
import { RaggedArray } from '../ragged-array.ts';
import { columnOf, StringListColumn, VariableWidthColumn } from './arrow-columns.ts';
import { ChunkPayloads, type ChunkPayload, type ChunkPayloadSections } from './chunk-payloads.ts';
import { BOXES_COLUMN, GROUPS_COLUMN, METADATA_COLUMN, PAGES_COLUMN } from './lancedb-schema.ts';
import { metadataFromKey, metadataKey, type DocumentMetadata } from '../search-filter/document-metadata.ts';
import { documentMatcher } from '../search-filter/filter-match.ts';
import { isEmptyFilter, type SearchFilter } from '../search-filter/search-controls.ts';
import { readSectionsFile, readSectionsMeta, writeSectionsFile } from './sections-file.ts';
import type { TableSnapshot } from './table-identity.ts';

/** What a saved view's file says of itself: a file of another format or table version is not used. */
interface SavedViewMeta {
  format: number;
  tableVersion: number;
  /** The table's id (see table-identity.ts); absent for a table without one. */
  tableId?: string | undefined;
  chunks: number;
  sources: string[];
  groupLists: string[][];
  /** Each source's metadata (metadataKey JSON); absent in a view of a table without metadata. */
  metadata?: Array<[string, string]> | undefined;
}

type ChunkPayloadArrays = Omit<ChunkPayloadSections, 'sources' | 'groupLists'>;
const SPARSE_SECTIONS = ['terms', 'listStarts', 'slots', 'weights', 'slotTerms', 'slotTermStarts', 'groupOfSlot', 'differing', 'differingStarts'] as const;
const PAYLOAD_SECTIONS = ['texts', 'textStarts', 'headingPaths', 'headingPathStarts', 'chunkIndexes', 'sourceNumbers', 'groupsNumbers', 'pages', 'pageStarts', 'boxes', 'boxStarts'] as const;

/** Bumped whenever the saved layout changes: an older file is then ignored and rewritten by the next ingest. */
const SAVED_VIEW_FORMAT = 5;

const VIEW_COLUMNS = ['id', 'source', 'heading_path', 'chunk_index', 'text', 'sparse_indices', 'sparse_values'];

/**
 * The part of an embedded collection that queries need in memory: the BM25 sparse index (scored as
 * Qdrant does) and what a hit shows of each chunk. `tableId` and `version` say which table, at which
 * version, it reflects, so the store can tell when another process's write, or a collection deleted and
 * built again under the same name, makes it stale.
 *
 * An ingest run that changed the table saves the view to a file beside it (saveTo); a server then reads
 * that file (readSaved): one read and views into its buffer, a fraction of a second at 100k chunks.
 * Without a file of the current version the view is built from the table's columns (scan): a few
 * seconds at 100k chunks, and the scan's buffers leave the process's resident memory higher.
 */
export class LanceDbSearchView {
  /** Each document's metadata (what search filters test); a source without any is unknown. */
  private readonly metadataBySource = new Map<string, DocumentMetadata>();

  private constructor(
    readonly tableId: string | undefined,
    public version: number,
    private readonly sparseIndex = new SparseIndex(),
    /** What a hit shows of each chunk; the document's version and the dense vector stay on disk. */
    private readonly payloads = new ChunkPayloads(),
  ) {}

  /** The view saved at `path` if it is of this table, version and format; undefined otherwise. */
  static async readSaved(path: string, { tableId, version }: TableSnapshot): Promise<LanceDbSearchView | undefined> {
    const saved = await readSectionsFile<SavedViewMeta>(path);
    if (!saved || saved.meta.format !== SAVED_VIEW_FORMAT || saved.meta.tableVersion !== version || saved.meta.tableId !== tableId) return undefined;
    const { meta, sections } = saved;
    if (!['ids', 'idStarts', 'slotRows', ...SPARSE_SECTIONS, ...PAYLOAD_SECTIONS].every((name) => sections[name] !== undefined)) return undefined;
    const sectionsOf = <T>(names: readonly string[]) => Object.fromEntries(names.map((name) => [name, sections[name]])) as T;
    const idBytes = RaggedArray.fromSections(Uint8Array, sections.ids as Uint8Array, sections.idStarts as Int32Array);
    const decoder = new TextDecoder();
    const ids = Array.from({ length: meta.chunks }, (_, row) => decoder.decode(idBytes.at(row)));
    const slotIds = Array.from(sections.slotRows as Int32Array, (row) => ids[row]!);
    const sparseIndex = SparseIndex.fromSections({ ids: slotIds, ...sectionsOf<Omit<SparseIndexSections, 'ids'>>(SPARSE_SECTIONS) });
    const payloads = ChunkPayloads.fromSections(ids, { ...sectionsOf<ChunkPayloadArrays>(PAYLOAD_SECTIONS), sources: meta.sources, groupLists: meta.groupLists });
    const view = new LanceDbSearchView(tableId, version, sparseIndex, payloads);
    for (const [source, key] of meta.metadata ?? []) view.setMetadata(source, metadataFromKey(key));
    return view;
  }

  /** Whether the view saved at `path` is of this table and version, without reading the rest of it. */
  static async isSaved(path: string, { tableId, version }: TableSnapshot): Promise<boolean> {
    const meta = await readSectionsMeta<SavedViewMeta>(path);
    return meta?.format === SAVED_VIEW_FORMAT && meta.tableVersion === version && meta.tableId === tableId;
  }

  get snapshot(): TableSnapshot {
    return { tableId: this.tableId, version: this.version };
  }

  /** Writes the view for readSaved (atomically: a reader sees the previous file or this one), near-duplicates clustered. */
  async saveTo(path: string): Promise<void> {
    this.sparseIndex.clusterNearDuplicates();
    const { ids: slotIds, ...sparse } = this.sparseIndex.toSections();
    // Payloads keep their own row order (clustering reorders slots only): copying 100k texts into the
    // slots' order would add their size to the ingest's peak memory. slotRows maps each slot to its row.
    const { ids, slotRows } = this.payloads.rowOrder(slotIds);
    const { sources, groupLists, ...payloadArrays } = this.payloads.toSections(ids);
    const encoder = new TextEncoder();
    const idBytes = new RaggedArray<Uint8Array<ArrayBufferLike>>(Uint8Array);
    for (const id of ids) idBytes.push(encoder.encode(id));
    const { values, starts } = idBytes.sections();
    const meta: SavedViewMeta = { format: SAVED_VIEW_FORMAT, tableVersion: this.version, tableId: this.tableId, chunks: ids.length, sources, groupLists, metadata: [...this.metadataBySource].map(([source, metadata]) => [source, metadataKey(metadata)]) };
    await writeSectionsFile(path, meta, { ids: values, idStarts: starts, slotRows, ...sparse, ...payloadArrays });
  }

  /** Builds the view from the table's columns, batch by batch. */
  static async scan(table: Table, { tableId, version }: TableSnapshot, hasGroupsColumn: boolean, hasMetadataColumn = false, hasPagesColumn = false, hasBoxesColumn = false): Promise<LanceDbSearchView> {
    const view = new LanceDbSearchView(tableId, version);
    const columns = [...VIEW_COLUMNS, ...(hasGroupsColumn ? [GROUPS_COLUMN] : []), ...(hasMetadataColumn ? [METADATA_COLUMN] : []), ...(hasPagesColumn ? [PAGES_COLUMN] : []), ...(hasBoxesColumn ? [BOXES_COLUMN] : [])];
    for await (const batch of table.query().select(columns)) {
      const [ids, sources, chunkIndexes] = ['id', 'source', 'chunk_index'].map((name) => columnOf(batch, name));
      const groups = hasGroupsColumn ? new StringListColumn(batch, GROUPS_COLUMN) : undefined;
      const metadata = hasMetadataColumn ? columnOf(batch, METADATA_COLUMN) : undefined;
      const headingPaths = new VariableWidthColumn<Uint8Array>(batch, 'heading_path');
      const texts = new VariableWidthColumn<Uint8Array>(batch, 'text');
      const sparseIndices = new VariableWidthColumn<Uint32Array>(batch, 'sparse_indices');
      const sparseValues = new VariableWidthColumn<Float32Array>(batch, 'sparse_values');
      const pages = hasPagesColumn ? pagesColumn(batch) : undefined;
      const boxes = hasBoxesColumn ? new VariableWidthColumn<Uint8Array>(batch, BOXES_COLUMN) : undefined;
      for (let row = 0; row < batch.numRows; row++) {
        const id = ids!.get(row) as string;
        view.sparseIndex.upsert(id, { indices: sparseIndices.row(row), values: sparseValues.row(row) });
        view.payloads.set(id, {
          source: sources!.get(row) as string,
          headingPath: headingPaths.row(row),
          chunkIndex: chunkIndexes!.get(row) as number,
          text: texts.row(row),
          groups: normalizeGroups(groups?.row(row) ?? []),
          pages: pages?.(row),
          // A null row reads as no bytes: a chunk without boxes.
          boxes: boxes?.row(row),
        });
        const documentMetadata = metadataFromKey(metadata?.get(row) as string | null | undefined);
        if (documentMetadata) view.metadataBySource.set(sources!.get(row) as string, documentMetadata);
      }
    }
    return view;
  }

  /**
   * Readies a scanned view to serve: near-duplicates clustered (SparseIndex.clusterNearDuplicates) and the
   * spare capacity kept for appends given back. Not for a view about to be saved, which saveTo clusters.
   */
  prepareToServe(): void {
    this.sparseIndex.clusterNearDuplicates();
    this.sparseIndex.trimToSize();
    this.payloads.trimToSize();
  }

  /**
   * The `limit` best sparse matches the caller may read. Hidden chunks are skipped while scoring, not
   * after: the IDF stays the whole collection's, as Qdrant's does under a filter.
   */
  sparseSearch(sparse: SparseVector, limit: number, visibleGroups: readonly string[], sources?: ReadonlySet<string>): SparseMatch[] {
    const inSources = sources && ((id: string) => sources.has(this.payloads.sourceOf(id) ?? ''));
    if (this.payloads.everyChunkPublic) return this.sparseIndex.search(sparse, limit, inSources);
    const callerGroups = new Set(visibleGroups);
    return this.sparseIndex.search(sparse, limit, (id) => isVisibleTo(this.payloads.groupsOf(id) ?? [], callerGroups) && (!inSources || inSources(id)));
  }

  /**
   * The sources a search filter lets through, every filter field being per document; undefined for no filter.
   * Both legs then rank within them, so `limit` is filled with matching chunks.
   */
  matchingSources(filter: SearchFilter | undefined): Set<string> | undefined {
    if (!filter || isEmptyFilter(filter)) return undefined;
    const matches = documentMatcher(filter);
    return new Set(this.payloads.allSources().filter((source) => matches(source, this.metadataBySource.get(source))));
  }

  /** The chunk's source (a ranked id of the dense leg is checked against the filter's sources with it). */
  sourceOf(id: string): string | undefined {
    return this.payloads.sourceOf(id);
  }

  /** Whether the view holds the chunk and `callerGroups` may read it; nothing is decoded. */
  isVisible(id: string, callerGroups: ReadonlySet<string>): boolean {
    const groups = this.payloads.groupsOf(id);
    return groups !== undefined && isVisibleTo(groups, callerGroups);
  }

  /** The chunk as a hit; a ranked id without a payload means the view and the table disagree. */
  toHit(id: string, score: number): SearchHit {
    const payload = this.payloads.get(id);
    if (!payload) throw new RagError('RAG_INTERNAL', `chunk ${id} is indexed but has no payload`);
    const { source, headingPath, chunkIndex, text, pages, boxes } = payload;
    const metadata = this.metadataBySource.get(source);
    const title = metadata?.title === undefined ? {} : { title: metadata.title };
    return { id, source, headingPath, chunkIndex, text, score, fusionScore: score, ...(pages ? { pages } : {}), ...(boxes ? { boxes } : {}), modifiedAt: metadata?.modifiedAt, ...title };
  }

  /** The modified time of the chunk's document (what a freshness boost reads), when known. */
  modifiedAtOf(id: string): number | undefined {
    const source = this.payloads.sourceOf(id);
    return source === undefined ? undefined : this.metadataBySource.get(source)?.modifiedAt;
  }

  /** The chunk if it exists and `callerGroups` may read it. */
  visibleChunk(id: string, callerGroups: ReadonlySet<string>): ChunkPayload | undefined {
    const payload = this.payloads.get(id);
    return payload && isVisibleTo(payload.groups, callerGroups) ? payload : undefined;
  }

  remember(chunk: IndexedChunk): void {
    this.sparseIndex.upsert(chunk.id, chunk.sparse);
    const { source, headingPath, chunkIndex, text, groups, pages, boxes } = chunk;
    this.payloads.set(chunk.id, { source, headingPath, chunkIndex, text, groups, pages, boxes });
    this.setMetadata(source, chunk.metadata);
  }

  forget(id: string): void {
    this.sparseIndex.delete(id);
    this.payloads.delete(id);
  }

  forgetSource(source: string): void {
    for (const id of this.payloads.idsOfSource(source)) this.forget(id);
    this.metadataBySource.delete(source);
  }

  setMetadata(source: string, metadata: DocumentMetadata | undefined): void {
    if (metadata) this.metadataBySource.set(source, metadata);
    else this.metadataBySource.delete(source);
  }

  setGroups(source: string, groups: readonly string[]): void {
    this.payloads.setGroupsOfSource(source, [...groups]);
  }
}

/** The nullable pages column's rows (a null row: a chunk without pages) as views into the column, no copy. */
function pagesColumn(batch: RecordBatch): (row: number) => Int32Array | undefined {
  const column = columnOf(batch, PAGES_COLUMN);
  const values = new VariableWidthColumn<Int32Array>(batch, PAGES_COLUMN);
  return (row) => (column.isValid(row) ? values.row(row) : undefined);
}
