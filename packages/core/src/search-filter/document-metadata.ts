import { extname } from 'node:path';

/**
 * What search filters see of a document, stored on each of its chunks (both stores): known from the
 * listing (type, size, modified time, custom fields), so a change of it alone rewrites the chunks' payload
 * without reading or embedding the document. A chunk indexed before metadata existed has none: every
 * filter on a field it lacks excludes it (unknown never matches), a source glob still applies.
 */
export interface DocumentMetadata {
  /** The file name's extension, lowercased, without the dot ('' for none): `md`, `pdf`. */
  type: string;
  /** Bytes, when the listing says. */
  size?: number | undefined;
  /** Last modification, epoch seconds: a file's mtime, a GCS object's `updated`. */
  modifiedAt?: number | undefined;
  /** Custom fields: a folder's `.rag-metadata.yaml` rules, a GCS object's custom metadata (`rag-meta-<key>`). */
  meta: Readonly<Record<string, string>>;
}

/** `docs/Guide.PDF` → `pdf`; a dotfile or a name without a dot → ''. */
export function fileTypeOf(uri: string): string {
  return extname(uri.replace(/[?#].*$/, '')).slice(1).toLowerCase();
}

/** Epoch seconds of a Date or an RFC 3339 string; undefined when absent or unparseable. */
export function epochSecondsOf(time: Date | string | undefined): number | undefined {
  if (time === undefined) return undefined;
  const ms = typeof time === 'string' ? Date.parse(time) : time.getTime();
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

/** One spelling per metadata (keys sorted), so two compare as strings and intern well. */
export function metadataKey(metadata: DocumentMetadata | undefined): string {
  if (!metadata) return '';
  const meta = Object.fromEntries(Object.entries(metadata.meta).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify([metadata.type, metadata.size ?? null, metadata.modifiedAt ?? null, meta]);
}

export function sameMetadata(a: DocumentMetadata | undefined, b: DocumentMetadata | undefined): boolean {
  return a !== undefined && b !== undefined && metadataKey(a) === metadataKey(b);
}

/** Reads back what metadataKey wrote (the embedded store's column); undefined for '' or anything else. */
export function metadataFromKey(key: string | null | undefined): DocumentMetadata | undefined {
  if (!key) return undefined;
  try {
    const [type, size, modifiedAt, meta] = JSON.parse(key) as [string, number | null, number | null, Record<string, string>];
    return { type, size: size ?? undefined, modifiedAt: modifiedAt ?? undefined, meta };
  } catch {
    return undefined;
  }
}
