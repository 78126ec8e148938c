/** One document as a source lists it, before it is read. */
export interface SourceDocument {
  /** Stable identifier used as the chunk source: a relative path for a folder, gs://bucket/name for GCS. */
  uri: string;
  /** Version the source reports (GCS generation, file mtime+size); changes when the document changes. */
  sourceVersion?: string | undefined;
  /** Content hash the source reports without a download (GCS md5Hash), when it has one. */
  sourceHash?: string | undefined;
  read(signal?: AbortSignal): Promise<Buffer>;
}

export interface DocumentSource {
  readonly description: string;
  list(signal?: AbortSignal): AsyncIterable<SourceDocument>;
}
