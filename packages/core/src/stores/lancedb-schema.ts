import { Field, FixedSizeList, Float32, Int32, List, Schema, Uint32, Utf8 } from 'apache-arrow';
import type { IndexedChunk } from '../domain.ts';
import { metadataKey } from '../search-filter/document-metadata.ts';

/** Column layout of an embedded collection; payload names follow the seed's Qdrant payload. */
export function chunkTableSchema(dimension: number | null): Schema {
  const fields: Field[] = [
    new Field('id', new Utf8(), false),
    new Field('source', new Utf8(), false),
    new Field('heading_path', new Utf8(), false),
    new Field('chunk_index', new Int32(), false),
    new Field('text', new Utf8(), false),
    new Field('ingested_at', new Utf8(), false),
    new Field('content_hash', new Utf8(), false),
    new Field('source_version', new Utf8(), true),
    new Field(GROUPS_COLUMN, groupsType(), true),
    new Field(CONTEXT_COLUMN, new Utf8(), true),
    new Field(METADATA_COLUMN, new Utf8(), true),
    new Field(PAGES_COLUMN, new List(new Field('item', new Int32(), true)), true),
    new Field(BOXES_COLUMN, new Utf8(), true),
    new Field('sparse_indices', new List(new Field('item', new Uint32(), true)), false),
    // Qdrant stores sparse values as float32; so do we, so that both modes score alike.
    new Field('sparse_values', new List(new Field('item', new Float32(), true)), false),
  ];
  if (dimension !== null) {
    fields.push(new Field('dense', new FixedSizeList(dimension, new Field('item', new Float32(), true)), false));
  }
  return new Schema(fields);
}

/**
 * Groups allowed to read the chunk; [] is public, and so is null: what a table made before access groups
 * existed holds once open() has added the column (see GROUPS_COLUMN_SQL).
 */
export const GROUPS_COLUMN = 'groups';
/** How open() adds the column to an older table: null on every existing row, i.e. public, as before. */
export const GROUPS_COLUMN_SQL = "arrow_cast(NULL, 'List(Utf8)')";

/** The chunk's context (CONTEXT_MODE), embedded and encoded with its text but never shown; null on rows of older tables. */
export const CONTEXT_COLUMN = 'context';
export const CONTEXT_COLUMN_SQL = "arrow_cast(NULL, 'Utf8')";

/**
 * The document's metadata (what search filters test) as search-filter/document-metadata.ts's metadataKey JSON;
 * null on rows of tables made before metadata existed: unknown, matched by no filter on it.
 */
export const METADATA_COLUMN = 'metadata';
export const METADATA_COLUMN_SQL = "arrow_cast(NULL, 'Utf8')";

/**
 * The pages (PDF) or slides (PPTX) the chunk lies on (Chunk.pages); null for a document without pages, and on
 * every row of a table made before pages existed: the next ingest converts its PDF and PPTX documents again.
 */
export const PAGES_COLUMN = 'pages';
export const PAGES_COLUMN_SQL = "arrow_cast(NULL, 'List(Int32)')";

/**
 * The chunk's boxes (Chunk.boxes) as a JSON array; null for a chunk without any, and on every row of a table
 * made before boxes existed: unknown, and nothing is converted again for them.
 */
export const BOXES_COLUMN = 'boxes';
export const BOXES_COLUMN_SQL = "arrow_cast(NULL, 'Utf8')";

function groupsType(): List<Utf8> {
  return new List(new Field('item', new Utf8(), true));
}

/** One table row; an index signature because LanceDB takes rows as plain records. */
export interface ChunkRow extends Record<string, unknown> {
  id: string;
  source: string;
  heading_path: string;
  chunk_index: number;
  text: string;
  ingested_at: string;
  content_hash: string;
  source_version: string | null;
  groups: string[];
  context: string;
  metadata: string | null;
  pages: number[] | null;
  boxes: string | null;
  sparse_indices: number[];
  sparse_values: number[];
  dense?: number[];
}

export function toChunkRow(chunk: IndexedChunk, withDense: boolean): ChunkRow {
  const row: ChunkRow = {
    id: chunk.id,
    source: chunk.source,
    heading_path: chunk.headingPath,
    chunk_index: chunk.chunkIndex,
    text: chunk.text,
    ingested_at: chunk.ingestedAt,
    content_hash: chunk.contentHash,
    source_version: chunk.sourceVersion ?? null,
    groups: [...chunk.groups],
    context: chunk.context ?? '',
    metadata: chunk.metadata ? metadataKey(chunk.metadata) : null,
    pages: chunk.pages ? [...chunk.pages] : null,
    boxes: chunk.boxes?.length ? JSON.stringify(chunk.boxes) : null,
    sparse_indices: chunk.sparse.indices,
    sparse_values: chunk.sparse.values,
  };
  if (withDense) row.dense = chunk.dense ?? [];
  return row;
}

/** Every column but the dense vector: what the store keeps in memory. */
export const PAYLOAD_COLUMNS = [
  'id',
  'source',
  'heading_path',
  'chunk_index',
  'text',
  'content_hash',
  'source_version',
  GROUPS_COLUMN,
  'sparse_indices',
  'sparse_values',
];
