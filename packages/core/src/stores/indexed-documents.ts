import { sameGroups } from '../access/groups.ts';
import type { DocumentVersion, IndexedDocument } from '../domain.ts';
import { sameMetadata, type DocumentMetadata } from '../search-filter/document-metadata.ts';

/** Marks a document whose chunks disagree on the version (an interrupted sync): never equal to a real hash. */
const MIXED_VERSIONS = '';

/**
 * Adds one stored chunk to its document, for VectorStore.listDocuments. Chunks of two versions mean a
 * run stopped between an upsert and its stale deletes: no version then matches, so the next run
 * re-syncs the document and deletes the leftovers. Chunks of two sets of groups (a groups update cut
 * short) leave the document's groups undefined, so the next run rewrites them.
 */
export function addChunkToDocuments(
  documents: Map<string, IndexedDocument>,
  source: string,
  /** `pagesRecorded`: whether the chunk records its pages (Chunk.pages), [] included. */
  chunk: { id: string; index: number | undefined; pagesRecorded?: boolean },
  version: DocumentVersion,
  groups: readonly string[],
  metadata?: DocumentMetadata,
): void {
  const document = documents.get(source);
  if (!document) {
    const chunkIndexes = chunk.index === undefined ? {} : { chunkIndexes: [chunk.index] };
    documents.set(source, { source, contentHash: version.contentHash, sourceVersion: version.sourceVersion, chunkIds: [chunk.id], ...chunkIndexes, groups, metadata, pagesRecorded: chunk.pagesRecorded ?? false });
    return;
  }
  if (!chunk.pagesRecorded) document.pagesRecorded = false;
  document.chunkIds.push(chunk.id);
  // One chunk without its index (a point written by an older version) leaves the check to the ids.
  if (chunk.index === undefined) delete document.chunkIndexes;
  else document.chunkIndexes?.push(chunk.index);
  if (document.contentHash !== version.contentHash || document.sourceVersion !== version.sourceVersion) {
    document.contentHash = MIXED_VERSIONS;
    document.sourceVersion = undefined;
  }
  if (!sameGroups(document.groups, groups)) document.groups = undefined;
  if (!sameMetadata(document.metadata, metadata)) document.metadata = undefined;
}
