/** The data that flows through both paths: ingestion writes IndexedChunks, retrieval reads SearchHits. */
import type { DocumentMetadata } from './search-filter/document-metadata.ts';

export interface SparseVector {
  indices: number[];
  values: number[];
}

/** One piece of a document, as the chunker makes it. `text` already carries the `<source> > <headings>` prefix. */
export interface Chunk {
  id: string;
  source: string;
  headingPath: string;
  chunkIndex: number;
  text: string;
  /**
   * The pages (PDF) or slides (PPTX) the chunk's text lies on, 1-based, ascending, when its converter placed
   * the document on pages; [] when it did but found none for this chunk; absent for a document without pages.
   */
  pages?: readonly number[] | undefined;
  /** Where on its pages the chunk's docling items lie (see PageBox); absent when the converter gave none. */
  boxes?: readonly PageBox[] | undefined;
}

/**
 * One docling item's box on a page: its provenance (docling_core's ProvenanceItem, `bbox` a BoundingBox),
 * coordinates as docling gives them (PDF points for a PDF), `origin` its coord_origin.
 */
export interface PageBox {
  page: number;
  l: number;
  t: number;
  r: number;
  b: number;
  origin: 'TOPLEFT' | 'BOTTOMLEFT';
}

/** What identifies a version of a document, to skip unchanged ones on the next run. */
export interface DocumentVersion {
  contentHash: string;
  sourceVersion?: string | undefined;
}

export interface IndexedChunk extends Chunk, DocumentVersion {
  /** Groups allowed to read the chunk's document; empty: public (see access/groups.ts). */
  groups: readonly string[];
  dense?: number[] | undefined;
  sparse: SparseVector;
  ingestedAt: string;
  /** What situates the chunk in its document (CONTEXT_MODE), prepended to the embedded and BM25-encoded text, never shown; '' for none. */
  context?: string | undefined;
  /** Its document's metadata, what search filters test (see search-filter/document-metadata.ts); absent: unknown. */
  metadata?: DocumentMetadata | undefined;
}

/** What the store knows of one indexed document. */
export interface IndexedDocument extends DocumentVersion {
  source: string;
  chunkIds: string[];
  /**
   * Each chunk's chunk_index, in the order of chunkIds, when the store lists it: wholeness (see isWhole) is
   * then checked on the indexes instead of recomputing every chunk id, the main cost of a no-op re-run.
   */
  chunkIndexes?: number[];
  /**
   * Groups its chunks carry (normalized: sorted, unique); undefined when they disagree, as a groups update
   * cut short leaves them: never equal to the listing's groups, so the next run rewrites them.
   */
  groups: readonly string[] | undefined;
  /** The metadata its chunks carry; undefined when unknown (indexed before metadata) or when they disagree. */
  metadata?: DocumentMetadata | undefined;
  /** True when every chunk records its pages (Chunk.pages, even []); false for one indexed before pages existed, or not paged. */
  pagesRecorded?: boolean | undefined;
}

export interface SearchHit {
  id: string;
  source: string;
  headingPath: string;
  chunkIndex: number;
  text: string;
  /** Final score: the rerank score when a reranker ran, otherwise the fusion score. */
  score: number;
  /** Reciprocal Rank Fusion score, kept when a reranker replaced `score`. */
  fusionScore: number;
  /** See Chunk.pages: where a paged document's chunk lies; absent otherwise. */
  pages?: readonly number[] | undefined;
  /** See Chunk.boxes; absent when unknown. */
  boxes?: readonly PageBox[] | undefined;
  /** True when `score` is the reranker's (it runs only when the store returned more than k candidates). */
  reranked?: boolean;
  /** Its document's modified time, epoch seconds, when known: what a freshness boost applied after the rerank reads. */
  modifiedAt?: number | undefined;
  /** Its document's title (search-filter/document-title.ts), when indexed with one. */
  title?: string | undefined;
}

/** The embedding model a collection was built with; a collection refuses any other. */
export interface EmbeddingModelLock {
  model: string;
  dimension: number;
}

/** How a collection's chunk contexts were made (CONTEXT_MODE and the version of its rule or prompt); a collection refuses another. */
export interface ContextLock {
  mode: 'off' | 'lead' | 'llm';
  /** null for `off`. */
  promptVersion: string | null;
}
