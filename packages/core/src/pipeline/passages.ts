import { isVisibleTo } from '../access/groups.ts';
import { chunkId } from '../chunking/chunk-id.ts';
import type { Chunk } from '../domain.ts';
import { RagError } from '../errors.ts';
import type { VectorStore } from '../stores/vector-store.ts';

/** One indexed document as a caller sees it. */
export interface SourceSummary {
  source: string;
  chunks: number;
}

/** A passage with the chunks around it, in document order. */
export interface PassageInContext {
  passage: Chunk;
  before: Chunk[];
  after: Chunk[];
}

/**
 * Reads the index by document rather than by query: the sources a caller may see and one passage with
 * its neighbours. A document outside the caller's groups reads exactly as a missing one.
 */
export class PassageReader {
  constructor(private readonly store: VectorStore) {}

  /** Sources visible to `visibleGroups` (PUBLIC_ONLY: public ones), sorted, optionally under a prefix. */
  async listSources(visibleGroups: readonly string[], prefix = ''): Promise<SourceSummary[]> {
    const callerGroups = new Set(visibleGroups);
    const documents = await this.store.listDocuments();
    return documents
      // Groups undefined: a groups update was cut short and the chunks disagree; hidden until the next sync.
      .filter((document) => document.groups !== undefined && isVisibleTo(document.groups, callerGroups))
      .filter((document) => document.source.startsWith(prefix))
      .map((document) => ({ source: document.source, chunks: document.chunkIds.length }))
      .sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  }

  /** The passage `source#chunkIndex` and up to `neighbours` chunks on each side; RAG_PASSAGE_NOT_FOUND when missing or hidden. */
  async passage(source: string, chunkIndex: number, visibleGroups: readonly string[], neighbours = 1, signal?: AbortSignal): Promise<PassageInContext> {
    const first = Math.max(0, chunkIndex - neighbours);
    const indexes = Array.from({ length: chunkIndex + neighbours - first + 1 }, (_, offset) => first + offset);
    // Point ids are uuid5("<source>#<chunk_index>") (chunking/chunk-id.ts): a passage is fetched by id, no scan.
    const chunks = await this.store.getChunks(indexes.map((index) => chunkId(source, index)), visibleGroups, signal);
    const byIndex = new Map(chunks.map((chunk) => [chunk.chunkIndex, chunk]));
    const passage = byIndex.get(chunkIndex);
    if (!passage) throw new RagError('RAG_PASSAGE_NOT_FOUND', `(${source}#${chunkIndex})`);
    const inOrder = [...byIndex.values()].sort((a, b) => a.chunkIndex - b.chunkIndex);
    return { passage, before: inOrder.filter((chunk) => chunk.chunkIndex < chunkIndex), after: inOrder.filter((chunk) => chunk.chunkIndex > chunkIndex) };
  }

  /** The `source_version` indexed for `source` (see VectorStore.sourceVersionOf); undefined when unknown. Check visibility first. */
  async sourceVersion(source: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.store.sourceVersionOf?.(source, signal);
  }
}
