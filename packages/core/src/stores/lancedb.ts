import { join } from 'node:path';
import { connect, type Connection, type Table } from '@lancedb/lancedb';
import type { FixedSizeList } from 'apache-arrow';
import { isVisibleTo, normalizeGroups } from '../access/groups.ts';
import type { Chunk, ContextLock, EmbeddingModelLock, IndexedChunk, IndexedDocument, SearchHit } from '../domain.ts';
import { RagError } from '../errors.ts';
import { reciprocalRankFusion } from '../fusion/rrf.ts';
import { SparseIndex } from '../sparse/sparse-index.ts';
import { assertSameContext, UNRECORDED_NON_EMPTY } from './context-lock.ts';
import { chunkTableSchema, CONTEXT_COLUMN, CONTEXT_COLUMN_SQL, GROUPS_COLUMN, GROUPS_COLUMN_SQL, PAYLOAD_COLUMNS, toChunkRow } from './lancedb-schema.ts';
import { describeRecorded, readRecordedModel, writeRecordedModel, type RecordedModel } from './model-lock-file.ts';
import { addChunkToDocuments } from './indexed-documents.ts';
import type { HybridQuery, OpenOptions, VectorStore } from './vector-store.ts';

interface ChunkPayload {
  source: string;
  headingPath: string;
  chunkIndex: number;
  text: string;
  contentHash: string;
  sourceVersion: string | undefined;
  groups: readonly string[];
}

/**
 * The embedded store: a LanceDB table on disk holds every chunk with its dense and sparse vectors.
 * Dense search runs in LanceDB (cosine); the sparse leg is scored in memory from the stored BM25
 * vectors exactly as Qdrant's IDF modifier does, and both legs are fused with Qdrant's RRF, so a
 * query ranks the same here as against the production Qdrant collection. Access groups filter both legs
 * while they rank (a LanceDB `where` prefilter, a visibility test in the sparse scan), as Qdrant's
 * prefetch filters do, so the top k holds only chunks the caller may read.
 */
export class LanceDbStore implements VectorStore {
  readonly name = 'lancedb';
  private connection: Connection | undefined;
  private table: Table | undefined;
  private recorded: RecordedModel | undefined;
  private loadedVersion = -1;
  private sparseIndex = new SparseIndex();
  private payloads = new Map<string, ChunkPayload>();
  /** False only for a table older than access groups opened by a dry run, which must not add the column. */
  private hasGroupsColumn = true;

  constructor(private readonly options: { dataDir: string; collection: string }) {}

  private get modelFile(): string {
    return join(this.options.dataDir, 'lancedb', `${this.options.collection}.model.json`);
  }

  async open(lock: EmbeddingModelLock | null, options: OpenOptions = {}): Promise<void> {
    const create = options.create ?? true;
    this.connection = await connect(join(this.options.dataDir, 'lancedb'), { readConsistencyInterval: 0 });
    if (!(await this.connection.tableNames()).includes(this.options.collection)) {
      if (create) await this.createCollection(this.connection, lock, options.context);
      return;
    }
    this.table = await this.connection.openTable(this.options.collection);
    this.recorded = (await readRecordedModel(this.modelFile)) ?? (await this.recordFromSchema(this.table, lock, create));
    this.assertSameModel(this.recorded, lock);
    await this.addGroupsColumnIfMissing(this.table, create);
    await this.addColumnIfMissing(this.table, CONTEXT_COLUMN, CONTEXT_COLUMN_SQL, create);
    if (options.context) await this.checkContext(this.table, options.context, lock, create);
    await this.refresh();
  }

  async upsert(chunks: IndexedChunk[]): Promise<void> {
    if (chunks.length === 0) return;
    const withDense = this.recorded?.model != null;
    if (withDense && chunks.some((chunk) => chunk.dense === undefined)) {
      throw new RagError('RAG_MODEL_MISMATCH', `This collection holds dense vectors of ${describeRecorded(this.recorded!)}; configure that embedder to write to it.`);
    }
    const rows = chunks.map((chunk) => toChunkRow(chunk, withDense));
    await this.afterOwnWrite(async (table) => {
      await table.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(rows);
      for (const chunk of chunks) this.remember(chunk);
    });
  }

  async deleteByIds(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.afterOwnWrite(async (table) => {
      await table.delete(`id IN (${ids.map(sqlString).join(', ')})`);
      for (const id of ids) this.forget(id);
    });
  }

  async deleteBySource(source: string): Promise<void> {
    await this.afterOwnWrite(async (table) => {
      await table.delete(`source = ${sqlString(source)}`);
      for (const [id, payload] of this.payloads) if (payload.source === source) this.forget(id);
    });
  }

  /** One LanceDB update of the document's rows (one commit); the vectors are not touched. */
  async setGroups(source: string, groups: readonly string[]): Promise<void> {
    await this.afterOwnWrite(async (table) => {
      await table.update({ where: `source = ${sqlString(source)}`, valuesSql: { [GROUPS_COLUMN]: groupsSql(groups) } });
      for (const payload of this.payloads.values()) if (payload.source === source) payload.groups = [...groups];
    });
  }

  async listDocuments(): Promise<IndexedDocument[]> {
    if (!this.table) return [];
    await this.refresh();
    const documents = new Map<string, IndexedDocument>();
    for (const [id, payload] of this.payloads) addChunkToDocuments(documents, payload.source, id, payload, payload.groups);
    return [...documents.values()];
  }

  async search(query: HybridQuery): Promise<SearchHit[]> {
    if (!this.table) return [];
    await this.refresh();
    const candidates = Math.max(query.prefetchLimit, query.limit);
    const callerGroups = new Set(query.visibleGroups);
    // Skipped while scoring, not after: the IDF stays the whole collection's (as Qdrant's does under a filter).
    const isVisible = (id: string) => isVisibleTo(this.payloads.get(id)?.groups ?? [], callerGroups);
    const sparseRanking = this.sparseIndex.search(query.sparse, candidates, isVisible);
    if (!query.dense || this.recorded?.model == null) {
      // Like a sparse-only Qdrant query: the score is the IDF-weighted BM25 score itself.
      return sparseRanking.slice(0, query.limit).map(({ id, score }) => this.toHit(id, score));
    }
    const denseIds = await this.denseSearch(query.dense, candidates, query.visibleGroups);
    const fused = reciprocalRankFusion([denseIds, sparseRanking.map(({ id }) => id)]);
    return fused.slice(0, query.limit).map(({ id, score }) => this.toHit(id, score));
  }

  async getChunks(ids: readonly string[], visibleGroups: readonly string[]): Promise<Chunk[]> {
    if (!this.table) return [];
    await this.refresh();
    const callerGroups = new Set(visibleGroups);
    return ids.flatMap((id) => {
      const payload = this.payloads.get(id);
      if (!payload || !isVisibleTo(payload.groups, callerGroups)) return [];
      const { source, headingPath, chunkIndex, text } = payload;
      return [{ id, source, headingPath, chunkIndex, text }];
    });
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
    const { compaction, prune } = await this.requireTable().optimize({ cleanupOlderThan: new Date(Date.now() - 60 * 60 * 1000) });
    await this.refresh();
    return `compacted ${compaction.fragmentsRemoved} fragments into ${compaction.fragmentsAdded}, removed ${prune.oldVersionsRemoved} old versions`;
  }

  async checkReady(): Promise<void> {
    this.requireTable();
  }

  async close(): Promise<void> {
    this.table?.close();
    this.connection?.close();
    this.table = undefined;
    this.connection = undefined;
  }

  /** LanceDB filters before the vector search by default (prefilter), so `limit` visible rows come back. */
  private async denseSearch(vector: number[], limit: number, visibleGroups: readonly string[]): Promise<string[]> {
    let search = this.requireTable().vectorSearch(vector).column('dense').distanceType('cosine');
    // Without the column (a dry run over an old table) every row is public.
    if (this.hasGroupsColumn) search = search.where(visibilityWhere(visibleGroups));
    const rows = await search.select(['id']).limit(limit).toArray();
    return rows.map((row: { id: string }) => row.id);
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
    await writeRecordedModel(this.modelFile, model, wanted);
    this.recorded = { ...this.recorded!, context: wanted };
  }

  private toHit(id: string, score: number): SearchHit {
    const payload = this.payloads.get(id);
    if (!payload) throw new RagError('RAG_INTERNAL', `chunk ${id} is indexed but has no payload`);
    const { source, headingPath, chunkIndex, text } = payload;
    return { id, source, headingPath, chunkIndex, text, score, fusionScore: score };
  }

  /**
   * Applies this process's own write to the in-memory view without re-reading the table; a write
   * by another process in between is noticed by the version check and triggers a full reload.
   */
  private async afterOwnWrite(write: (table: Table) => Promise<void>): Promise<void> {
    const table = this.requireTable();
    const before = await table.version();
    const upToDate = before === this.loadedVersion;
    await write(table);
    if (upToDate) this.loadedVersion = await table.version();
    else await this.refresh();
  }

  private remember(chunk: IndexedChunk): void {
    this.sparseIndex.upsert(chunk.id, { indices: chunk.sparse.indices, values: chunk.sparse.values.map(Math.fround) });
    this.payloads.set(chunk.id, {
      source: chunk.source,
      headingPath: chunk.headingPath,
      chunkIndex: chunk.chunkIndex,
      text: chunk.text,
      contentHash: chunk.contentHash,
      sourceVersion: chunk.sourceVersion,
      groups: chunk.groups,
    });
  }

  private forget(id: string): void {
    this.sparseIndex.delete(id);
    this.payloads.delete(id);
  }

  /** Reloads the in-memory sparse index when another process (an ingest run) changed the table. */
  private async refresh(): Promise<void> {
    const table = this.requireTable();
    const version = await table.version();
    if (version === this.loadedVersion) return;
    const columns = this.hasGroupsColumn ? PAYLOAD_COLUMNS : PAYLOAD_COLUMNS.filter((column) => column !== GROUPS_COLUMN);
    const rows = await table.query().select(columns).toArray();
    const sparseIndex = new SparseIndex();
    const payloads = new Map<string, ChunkPayload>();
    for (const row of rows) {
      sparseIndex.upsert(row.id, { indices: Array.from(row.sparse_indices), values: Array.from(row.sparse_values) });
      payloads.set(row.id, {
        source: row.source,
        headingPath: row.heading_path,
        chunkIndex: row.chunk_index,
        text: row.text,
        contentHash: row.content_hash,
        sourceVersion: row.source_version ?? undefined,
        groups: row.groups ? normalizeGroups(Array.from(row.groups as Iterable<string>)) : [],
      });
    }
    this.sparseIndex = sparseIndex;
    this.payloads = payloads;
    this.loadedVersion = version;
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
    this.table = await connection.createEmptyTable(this.options.collection, chunkTableSchema(lock?.dimension ?? null));
    await writeRecordedModel(this.modelFile, lock, context);
    this.recorded = { model: lock?.model ?? null, dimension: lock?.dimension ?? null, context };
    await this.refresh();
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
    if (write && (dimension === null || model === lock?.model)) await writeRecordedModel(this.modelFile, dimension === null ? null : lock);
    return { model, dimension };
  }

  private requireTable(): Table {
    if (!this.table) throw new RagError('RAG_STORE_NOT_READY');
    return this.table;
  }
}

function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** Public rows (null or empty `groups`) and rows sharing a group with the caller, in LanceDB's SQL (DataFusion). */
function visibilityWhere(visibleGroups: readonly string[]): string {
  const isPublic = `${GROUPS_COLUMN} IS NULL OR array_length(${GROUPS_COLUMN}) = 0`;
  return visibleGroups.length === 0 ? isPublic : `${isPublic} OR array_has_any(${GROUPS_COLUMN}, ${groupsSql(visibleGroups)})`;
}

/** A List(Utf8) literal; make_array() alone has no element type, hence the cast for an empty list. */
function groupsSql(groups: readonly string[]): string {
  return groups.length === 0 ? "arrow_cast(make_array(), 'List(Utf8)')" : `make_array(${groups.map(sqlString).join(', ')})`;
}
