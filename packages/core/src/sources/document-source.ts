import type { DocumentMetadata } from '../search-filter/document-metadata.ts';

/** One document as a source lists it, before it is read. */
export interface SourceDocument {
  /** Stable identifier used as the chunk source: a relative path for a folder, gs://bucket/name for GCS. */
  uri: string;
  /**
   * What the source says about the content without reading it: the same value means the same
   * content, so the document is skipped unread (GCS `md5:<md5Hash>`, else `generation:<n>`; a
   * file's mtime and size). A different value only means "read it and compare the content hash".
   */
  sourceVersion?: string | undefined;
  /** Bytes, when the listing says (a file's stat, a GCS object's `size`): a document over the limit is refused unread. */
  size?: number | undefined;
  /**
   * Groups allowed to read it, normalized (see access/groups.ts); empty: public. A folder's `.rag-access.yaml`
   * rules, a GCS object's `rag-groups` metadata. Known from the listing, so a change of groups alone is
   * applied without reading the document.
   */
  groups: string[];
  /**
   * A folder without `.rag-access.yaml`: the document is public only because no file restricts it. The
   * ingest then keeps a document the index holds as restricted as it is (RAG_ACCESS_WOULD_PUBLISH):
   * a renamed or deleted access file must not publish it.
   */
  accessFileMissing?: boolean | undefined;
  /**
   * What search filters see of it (type, size, modified time, custom fields), known from the listing: a change
   * of it alone rewrites the payload of its chunks without reading the document. Absent: the source gives none.
   */
  metadata?: DocumentMetadata | undefined;
  /** Custom metadata keys the source left out of `metadata` (custom-metadata-keys.ts): reported by the run, never a failure. */
  ignoredMetaKeys?: readonly string[] | undefined;
  read(signal?: AbortSignal): Promise<Buffer>;
}

/** An entry the listing passed over that a reader might take for a document, and why. */
export interface SkippedEntry {
  uri: string;
  reason: string;
}

export interface DocumentSource {
  readonly description: string;
  list(signal?: AbortSignal): AsyncIterable<SourceDocument>;
  /** What the last listing passed over (a folder's symbolic links), complete once it is through; counted in `skipped`. */
  readonly skippedEntries?: readonly SkippedEntry[];
}
