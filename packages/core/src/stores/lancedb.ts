import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, type Connection, type Table } from '@lancedb/lancedb';
import type { FixedSizeList } from 'apache-arrow';
import { normalizeGroups } from '../access/groups.ts';
import type { Chunk, ContextLock, EmbeddingModelLock, IndexedChunk, IndexedDocument, SearchHit } from '../domain.ts';
import { RagError } from '../errors.ts';
import { untilAborted } from '../until-aborted.ts';
import { fuseHybrid, QDRANT_RRF_K, reciprocalRankFusion, type FusedMatch } from '../fusion/rrf.ts';
import { rescoreByFreshness } from '../fusion/freshness-rescore.ts';
import { columnOf, StringListColumn } from './arrow-columns.ts';
import { assertSameContext, UNRECORDED_NON_EMPTY } from './context-lock.ts';
import { chunkTableSchema, CONTEXT_COLUMN, CONTEXT_COLUMN_SQL, GROUPS_COLUMN, GROUPS_COLUMN_SQL, METADATA_COLUMN, METADATA_COLUMN_SQL, PAGES_COLUMN, PAGES_COLUMN_SQL, BOXES_COLUMN, BOXES_COLUMN_SQL, toChunkRow } from './lancedb-schema.ts';
import { metadataFromKey, metadataKey, type DocumentMetadata } from '../search-filter/document-metadata.ts';
import { addChunkToDocuments } from './indexed-documents.ts';
import { DEFAULT_ANN_MIN_ROWS, ensureAnnIndex } from './lancedb-ann-index.ts';
import { denseLeg } from './lancedb-dense-leg.ts';
import { PinnedTable } from './lancedb-pinned-table.ts';
import { LanceDbSearchView } from './lancedb-search-view.ts';
import { chunkId } from '../chunking/chunk-id.ts';
import { groupsSql, sqlString } from './lancedb-sql.ts';
import { describeRecorded, readRecordedModel, recordOf, writeRecordedModel, type RecordedModel } from './model-lock-file.ts';
import { assertSameLanguage } from './language-lock.ts';
import { DEFAULT_BM25_LANGUAGE, type Bm25Language } from '../sparse/languages/bm25-languages.ts';
import { isSameTable, RecordedTableId, type TableSnapshot } from './table-identity.ts';
import type { HybridQuery, OpenOptions, VectorStore } from './vector-store.ts';
import { isWriting, markWriting } from './writer-mark.ts';

/** The columns of a chunk that say which document version it belongs to: all an ingest run reads. */
const VERSION_COLUMNS = ['id', 'source', 'chunk_index', 'content_hash', 'source_version'];

/** How long a readiness probe waits for the first load of the search view before answering RAG_STORE_LOADING. */
const READY_WAIT_MS = 1000;

/**
 * The embedded store: a LanceDB table on disk holds every chunk with its dense and sparse vectors.
 * Dense search runs in LanceDB (cosine); the sparse leg is scored in memory from the stored BM25
 * vectors exactly as Qdrant's IDF modifier does, and both legs are fused with Qdrant's RRF, so a
 * query ranks the same here as against the production Qdrant collection. Access groups filter both legs
 * while they rank (a LanceDB `where` prefilter, a visibility test in the sparse scan), as Qdrant's
 * prefetch filters do, so the top k holds only chunks the caller may read.
 *
 * The in-memory part (LanceDbSearchView) is loaded by the first query, or by prepareForSearch, and
 * reloaded when another process changed the table or made a new one under the same name; a process that
 * only writes (an ingest run) never loads it and reads nothing but the document versions. Both legs of a
 * query read the view's table version (the dense one through a handle pinned to it), whatever another
 * process writes meanwhile.
 */
export class LanceDbStore implements VectorStore {
  readonly name = 'lancedb';
  private connection: Connection | undefined;
  private table: Table | undefined;
  private recorded: RecordedModel | undefined;
  private view: LanceDbSearchView | undefined;
  private loading: { snapshot: TableSnapshot; view: Promise<LanceDbSearchView> } | undefined;
  /** The handle at the view's version: what the view is scanned from and the dense leg searches. */
  private readonly pinned = new PinnedTable(() => this.requireConnection().openTable(this.options.collection));
  private readonly tableIds: RecordedTableId;
  /** False only for a table older than access groups opened by a dry run, which must not add the column. */
  private hasGroupsColumn = true;
  /** False only for a table older than search metadata opened by a dry run: every row's metadata is then unknown. */
  private hasMetadataColumn = true;
  /** False only for a table older than page numbers opened by a dry run: no chunk then has pages. */
  private hasPagesColumn = true;
  /** False only for a table older than boxes opened by a dry run or a server: no chunk then has boxes. */
  private hasBoxesColumn = true;

  readonly bm25Language: Bm25Language;

  /** `annMinRows`: rows from which compact() builds the dense ANN index (EMBEDDED_ANN_MIN_ROWS). */
  constructor(private readonly options: { dataDir: string; collection: string; bm25Language?: Bm25Language; annMinRows?: number }) {
    this.tableIds = new RecordedTableId(this.modelFile);
    this.bm25Language = options.bm25Language ?? DEFAULT_BM25_LANGUAGE;
  }

  private get modelFile(): string {
    return join(this.options.dataDir, 'lancedb', `${this.options.collection}.model.json`);
  }

  /** Present while an ingest run writes (see writer-mark.ts). */
  private get writingFile(): string {
    return join(this.options.dataDir, 'lancedb', `${this.options.collection}.writing`);
  }

  /** The search view an ingest run saves for the servers (see LanceDbSearchView). */
  private get viewFile(): string {
    return join(this.options.dataDir, 'lancedb', `${this.options.collection}.search-view`);
  }

  async open(lock: EmbeddingModelLock | null, options: OpenOptions = {}): Promise<void> {
    const create = options.create ?? true;
    const connection = await connect(join(this.options.dataDir, 'lancedb'), { readConsistencyInterval: 0 });
    this.connection = connection;
    if (!(await connection.tableNames()).includes(this.options.collection)) {
      if (create) await this.createCollection(connection, lock, options.context);
      return;
    }
    this.table = await connection.openTable(this.options.collection);
    const fromFile = await readRecordedModel(this.modelFile);
    this.recorded = fromFile ?? (await this.recordFromSchema(this.table, lock, create));
    this.assertSameModel(this.recorded, lock);
    assertSameLanguage(this.options.collection, this.recorded.bm25Language, this.bm25Language);
    // A table made before tables had ids gets one from its first writer.
    if (create && fromFile && !fromFile.tableId) await this.record({ ...fromFile, tableId: randomUUID() });
    await this.addGroupsColumnIfMissing(this.table, create);
    await this.addColumnIfMissing(this.table, CONTEXT_COLUMN, CONTEXT_COLUMN_SQL, create);
    // An older table gets the column, null (unknown) on every row: the next sync fills it without re-embedding.
    await this.addColumnIfMissing(this.table, METADATA_COLUMN, METADATA_COLUMN_SQL, create);
    this.hasMetadataColumn = (await this.table.schema()).fields.some((field) => field.name === METADATA_COLUMN);
    // Null on every existing row: the next ingest converts the PDF and PPTX documents again for their pages.
    await this.addColumnIfMissing(this.table, PAGES_COLUMN, PAGES_COLUMN_SQL, create);
    this.hasPagesColumn = (await this.table.schema()).fields.some((field) => field.name === PAGES_COLUMN);
    // Null on every existing row: boxes unknown; nothing is converted again for them.
    await this.addColumnIfMissing(this.table, BOXES_COLUMN, BOXES_COLUMN_SQL, create);
    this.hasBoxesColumn = (await this.table.schema()).fields.some((field) => field.name === BOXES_COLUMN);
    if (options.context) await this.checkContext(this.table, options.context, lock, create);
  }

  async upsert(chunks: IndexedChunk[]): Promise<void> {
    if (chunks.length === 0) return;
    const withDense = this.recorded?.model != null;
    if (withDense && chunks.some((chunk) => chunk.dense === undefined)) {
      throw new RagError('RAG_MODEL_MISMATCH', `This collection holds dense vectors of ${describeRecorded(this.recorded!)}; configure that embedder to write to it.`);
    }
    const rows = chunks.map((chunk) => toChunkRow(chunk, withDense));
    await this.afterOwnWrite(
      (table) => table.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(rows),
      (view) => chunks.forEach((chunk) => view.remember(chunk)),
    );
  }

  async deleteByIds(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.afterOwnWrite(
      (table) => table.delete(`id IN (${ids.map(sqlString).join(', ')})`),
      (view) => ids.forEach((id) => view.forget(id)),
    );
  }

  async deleteBySource(source: string): Promise<void> {
    await this.afterOwnWrite(
      (table) => table.delete(`source = ${sqlString(source)}`),
      (view) => view.forgetSource(source),
    );
  }

  /** One LanceDB update of the document's rows (one commit); the vectors are not touched. */
  async setGroups(source: string, groups: readonly string[]): Promise<void> {
    await this.afterOwnWrite(
      (table) => table.update({ where: `source = ${sqlString(source)}`, valuesSql: { [GROUPS_COLUMN]: groupsSql(groups) } }),
      (view) => view.setGroups(source, groups),
    );
  }

  /** One LanceDB update of the document's rows' metadata column; the vectors are not touched. */
  async setMetadata(source: string, metadata: DocumentMetadata): Promise<void> {
    await this.afterOwnWrite(
      (table) => table.update({ where: `source = ${sqlString(source)}`, valuesSql: { [METADATA_COLUMN]: sqlString(metadataKey(metadata)) } }),
      (view) => view.setMetadata(source, metadata),
    );
  }

  /** Streams the version columns only, batch by batch: never the texts or the vectors. */
  async listDocuments(): Promise<IndexedDocument[]> {
    if (!this.table) return [];
    const documents = new Map<string, IndexedDocument>();
    const columns = [...VERSION_COLUMNS, ...(this.hasGroupsColumn ? [GROUPS_COLUMN] : []), ...(this.hasMetadataColumn ? [METADATA_COLUMN] : []), ...(this.hasPagesColumn ? [PAGES_COLUMN] : [])];
    for await (const batch of this.table.query().select(columns)) {
      const pages = this.hasPagesColumn ? columnOf(batch, PAGES_COLUMN) : undefined;
      const metadata = this.hasMetadataColumn ? columnOf(batch, METADATA_COLUMN) : undefined;
      const [ids, sources, chunkIndexes, contentHashes, sourceVersions] = VERSION_COLUMNS.map((name) => columnOf(batch, name));
      const groups = this.hasGroupsColumn ? new StringListColumn(batch, GROUPS_COLUMN) : undefined;
      for (let row = 0; row < batch.numRows; row++) {
        const version = { contentHash: contentHashes!.get(row) as string, sourceVersion: (sourceVersions!.get(row) as string | null) ?? undefined };
        const chunkGroups = normalizeGroups(groups?.row(row) ?? []);
        const chunk = { id: ids!.get(row) as string, index: chunkIndexes!.get(row) as number, pagesRecorded: pages?.isValid(row) ?? false };
        addChunkToDocuments(documents, sources!.get(row) as string, chunk, version, chunkGroups, metadataFromKey(metadata?.get(row) as string | null | undefined));
      }
    }
    return [...documents.values()];
  }

  async search(query: HybridQuery): Promise<SearchHit[]> {
    if (!this.table) return [];
    const view = await this.searchView();
    const candidates = Math.max(query.prefetchLimit, query.limit);
    const sources = view.matchingSources(query.filter);
    const sparseRanking = view.sparseSearch(query.sparse, candidates, query.visibleGroups, sources);
    const sparseOnly = !query.dense || this.recorded?.model == null;
    if (sparseOnly && !query.freshness) {
      // Like a sparse-only Qdrant query: the score is the IDF-weighted BM25 score itself.
      return sparseRanking.slice(0, query.limit).map(({ id, score }) => view.toHit(id, score));
    }
    const sparseIds = sparseRanking.map(({ id }) => id);
    let fused: FusedMatch[];
    if (sparseOnly) {
      // With a freshness boost, as QdrantStore asks: RRF over the one leg, so the boost adds to a rank score.
      fused = reciprocalRankFusion([sparseIds], query.fusion?.k ?? QDRANT_RRF_K);
    } else {
      const denseQuery = { vector: query.dense!, limit: candidates, visibleGroups: query.visibleGroups, hasGroupsColumn: this.hasGroupsColumn, sources };
      fused = fuseHybrid(await denseLeg(view, this.pinned, this.requireTable(), denseQuery), sparseIds, query.fusion);
    }
    if (query.freshness) fused = rescoreByFreshness(fused, candidates, query.freshness, (id) => view.modifiedAtOf(id));
    return fused.slice(0, query.limit).map(({ id, score }) => view.toHit(id, score));
  }

  async getChunks(ids: readonly string[], visibleGroups: readonly string[]): Promise<Chunk[]> {
    if (!this.table) return [];
    const view = await this.searchView();
    const callerGroups = new Set(visibleGroups);
    return ids.flatMap((id) => {
      const payload = view.visibleChunk(id, callerGroups);
      if (!payload) return [];
      const { source, headingPath, chunkIndex, text, pages, boxes } = payload;
      return [{ id, source, headingPath, chunkIndex, text, ...(pages ? { pages } : {}), ...(boxes ? { boxes } : {}) }];
    });
  }

  async sourceVersionOf(source: string): Promise<string | undefined> {
    if (!this.table) return undefined;
    const rows = await this.table.query().where(`id = ${sqlString(chunkId(source, 0))}`).select(['source_version']).limit(1).toArray();
    return (rows[0]?.source_version as string | null | undefined) ?? undefined;
  }

  /**
   * Saves the search view of the table's current version beside the table, for servers to load at start,
   * unless the saved one is already of that version; returns a line for the log, or undefined.
   */
  async saveSearchView(): Promise<string | undefined> {
    const table = this.requireTable();
    const snapshot = { tableId: this.recorded?.tableId, version: await table.version() };
    if (await LanceDbSearchView.isSaved(this.viewFile, snapshot)) return undefined;
    const held = this.view && isSameTable(this.view.snapshot, snapshot) && this.view.version === snapshot.version ? this.view : undefined;
    const view = held ?? (await LanceDbSearchView.scan(table, snapshot, this.hasGroupsColumn, this.hasMetadataColumn, this.hasPagesColumn, this.hasBoxesColumn));
    await view.saveTo(this.viewFile);
    return `search view saved for table version ${snapshot.version}`;
  }

  async markWriting(): Promise<() => Promise<void>> {
    return markWriting(this.writingFile);
  }

  /** Loads the search view now, so that the first query does not wait for it (the server calls it after open). */
  async prepareForSearch(): Promise<void> {
    if (this.table) await this.searchView();
  }

  async count(): Promise<number> {
    return this.table ? this.table.countRows() : 0;
  }

  /**
   * Every write adds files and a table version; without compaction a nightly sync slows reads down and
   * grows the folder forever. Versions older than an hour go (no query runs that long); LanceDB keeps
   * their files for its own 7-day safety window.
   */
  async compact(): Promise<string> {
    const table = this.requireTable();
    const before = await table.version();
    const { compaction, prune } = await table.optimize({ cleanupOlderThan: new Date(Date.now() - 60 * 60 * 1000) });
    const annIndex = await ensureAnnIndex(table, this.options.annMinRows ?? DEFAULT_ANN_MIN_ROWS);
    // Compaction rewrites files and an index adds one, not rows: a view of the version before them still holds.
    if (this.view?.version === before) this.view.version = await table.version();
    return `compacted ${compaction.fragmentsRemoved} fragments into ${compaction.fragmentsAdded}, removed ${prune.oldVersionsRemoved} old versions; ${annIndex}`;
  }

  /**
   * Ready once the search view has been loaded (any version): until then queries would wait for it, so
   * the probe waits a moment for it and otherwise answers RAG_STORE_LOADING.
   */
  async checkReady(signal?: AbortSignal): Promise<void> {
    this.requireTable();
    if (this.view) return;
    const wait = AbortSignal.any([AbortSignal.timeout(READY_WAIT_MS), ...(signal ? [signal] : [])]);
    const loaded = await untilAborted(this.searchView(), wait).then(
      () => true,
      (error: unknown) => {
        if (wait.aborted) return false;
        throw error;
      },
    );
    if (!loaded) throw new RagError('RAG_STORE_LOADING');
  }

  async close(): Promise<void> {
    this.pinned.close();
    this.table?.close();
    this.connection?.close();
    this.table = undefined;
    this.connection = undefined;
    this.view = undefined;
    this.loading = undefined;
  }

  /**
   * A table made before access groups gets the column, null (public) on every row, so the next sync can set
   * the groups of each document without re-embedding it. A dry run writes nothing and reads every row as public.
   */
  private async addGroupsColumnIfMissing(table: Table, create: boolean): Promise<void> {
    if ((await table.schema()).fields.some((field) => field.name === GROUPS_COLUMN)) return;
    if (create) await table.addColumns([{ name: GROUPS_COLUMN, valueSql: GROUPS_COLUMN_SQL }]);
    else this.hasGroupsColumn = false;
  }

  /** An older table gets the column, null on every row; a dry run writes nothing and needs none. */
  private async addColumnIfMissing(table: Table, name: string, valueSql: string, create: boolean): Promise<void> {
    if (!create || (await table.schema()).fields.some((field) => field.name === name)) return;
    await table.addColumns([{ name, valueSql }]);
  }

  /** See OpenOptions.context: the recorded mode must be the writer's; an empty table without a record takes it. */
  private async checkContext(table: Table, wanted: ContextLock, lock: EmbeddingModelLock | null, create: boolean): Promise<void> {
    const recorded = this.recorded?.context ?? ((await table.countRows()) === 0 ? undefined : UNRECORDED_NON_EMPTY);
    if (recorded) assertSameContext(this.options.collection, recorded, wanted);
    if (this.recorded?.context || !create) return;
    const model = this.recorded?.model == null ? null : { model: this.recorded.model, dimension: this.recorded.dimension ?? 0 };
    // A model this writer cannot name (no embedder configured, or an unrecorded one) is not rewritten.
    if (model && model.model !== lock?.model) return;
    await this.record(recordOf(model, wanted, this.recorded?.tableId));
  }

  /**
   * Applies this process's own write to a loaded view without re-reading the table. A view that was
   * already stale (another process wrote) is left so, and the next query reloads it.
   */
  private async afterOwnWrite(write: (table: Table) => Promise<unknown>, apply: (view: LanceDbSearchView) => void): Promise<void> {
    const table = this.requireTable();
    const before = await table.version();
    await write(table);
    const view = this.view;
    if (view?.version !== before) return;
    apply(view);
    view.version = await table.version();
  }

  /**
   * The saved view when it is of this table and version (an ingest run saved it), else one scanned from the
   * table at that version (the live table when the version cannot be checked out).
   */
  private async loadView(table: Table, snapshot: TableSnapshot): Promise<LanceDbSearchView> {
    const saved = await LanceDbSearchView.readSaved(this.viewFile, snapshot);
    if (saved) return saved;
    const pinned = await this.pinned.at(snapshot).catch(() => table);
    const scanned = await LanceDbSearchView.scan(pinned, snapshot, this.hasGroupsColumn, this.hasMetadataColumn, this.hasPagesColumn, this.hasBoxesColumn);
    scanned.prepareToServe();
    return scanned;
  }

  /** The table now under the collection's name, at its current version. */
  private async currentSnapshot(table: Table): Promise<TableSnapshot> {
    const [tableId, version] = await Promise.all([this.tableIds.current(), table.version()]);
    return { tableId, version };
  }

  /**
   * A view of the table now under the collection's name at its current version: the one held, or one load
   * shared by concurrent queries. One load at a time: a query that finds an older version loading waits for
   * it, then checks again, so a server beside a running ingest does not pile up table scans. While a newer
   * version loads, the old view stays held (and counts for readiness) but is not served.
   *
   * A held view of another table (the collection was deleted and built again, its versions starting over)
   * or of a version the table no longer has is replaced at once, running sync or not; a held view newer
   * than the version read means a load finished meanwhile, so the version is read again before deciding.
   */
  private async searchView(): Promise<LanceDbSearchView> {
    const table = this.requireTable();
    for (let readAgain = true; ; ) {
      const current = await this.currentSnapshot(table);
      const held = this.view;
      if (held && isSameTable(held.snapshot, current)) {
        if (held.version === current.version) return held;
        if (held.version > current.version && readAgain) {
          readAgain = false;
          continue;
        }
        // Mid-sync versions are not worth a reload each: the held view answers until the sync ends and saves its own.
        if (held.version < current.version && !this.loading && (await isWriting(this.writingFile))) return held;
      }
      const loading = this.loading ?? this.startLoading(table, current, held);
      if (isSameTable(loading.snapshot, current) && loading.snapshot.version >= current.version) return loading.view;
      await loading.view.catch(() => undefined);
    }
  }

  /** Loads the view of `snapshot`, which then replaces `replaced` (the view held when the load started). */
  private startLoading(table: Table, snapshot: TableSnapshot, replaced: LanceDbSearchView | undefined): { snapshot: TableSnapshot; view: Promise<LanceDbSearchView> } {
    const loading = { snapshot, view: this.loadView(table, snapshot) };
    this.loading = loading;
    loading.view.then(
      (view) => {
        if (this.loading === loading) this.loading = undefined;
        if (this.table === table && (this.view === undefined || this.view === replaced)) this.view = view;
      },
      () => {
        if (this.loading === loading) this.loading = undefined;
      },
    );
    return loading;
  }

  private assertSameModel(recorded: RecordedModel, lock: EmbeddingModelLock | null): void {
    // A collection with dense vectors still answers sparse-only queries (no embedder configured).
    if (lock === null) return;
    if (recorded.model === lock.model && recorded.dimension === lock.dimension) return;
    throw new RagError(
      'RAG_MODEL_MISMATCH',
      `Collection "${this.options.collection}" was built with ${describeRecorded(recorded)}; the configured embedder is ${lock.model} (${lock.dimension} dimensions).`,
    );
  }

  private async createCollection(connection: Connection, lock: EmbeddingModelLock | null, context: ContextLock | undefined): Promise<void> {
    // A view saved for an earlier table of this name (its folder deleted by hand) could carry a version number
    // the new table reaches too, and would then be served: it goes with the table it was saved for.
    await rm(this.viewFile, { force: true });
    this.table = await connection.createEmptyTable(this.options.collection, chunkTableSchema(lock?.dimension ?? null));
    // A new id: readers holding a view of the table this one replaces tell them apart by it.
    await this.record(recordOf(lock, context, randomUUID()));
  }

  /** Every record carries this store's language: `open` has checked it equals the collection's before any write. */
  private async record(recorded: RecordedModel): Promise<void> {
    const withLanguage = { ...recorded, bm25Language: this.bm25Language };
    await writeRecordedModel(this.modelFile, withLanguage);
    this.recorded = withLanguage;
  }

  /**
   * A table whose model record went missing (a copied or half-restored folder) is never recreated, which
   * would drop every chunk: its dense column tells the dimension, and a configured model of that
   * dimension is taken as the one that built it.
   */
  private async recordFromSchema(table: Table, lock: EmbeddingModelLock | null, write: boolean): Promise<RecordedModel> {
    const dense = (await table.schema()).fields.find((field) => field.name === 'dense');
    const dimension = dense ? (dense.type as FixedSizeList).listSize : null;
    const model = dimension === null ? null : lock?.dimension === dimension ? lock.model : `an unrecorded model`;
    if (write && (dimension === null || model === lock?.model)) {
      const recorded = recordOf(dimension === null ? null : lock, undefined, randomUUID());
      await writeRecordedModel(this.modelFile, recorded);
      return recorded;
    }
    return { model, dimension };
  }

  private requireConnection(): Connection {
    if (!this.connection) throw new RagError('RAG_STORE_NOT_READY');
    return this.connection;
  }

  private requireTable(): Table {
    if (!this.table) throw new RagError('RAG_STORE_NOT_READY');
    return this.table;
  }
}
