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
  /**
   * The document's title (document-title.ts: first H1, HTML <title>, else the file name), known once it is read:
   * not part of what the listing tells, so sameMetadata leaves it out and a metadata-only rewrite keeps it.
   */
  title?: string | undefined;
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

/** One spelling per metadata (keys sorted), so two compare as strings and intern well; the title last, when known. */
export function metadataKey(metadata: DocumentMetadata | undefined): string {
  if (!metadata) return '';
  return JSON.stringify([...listedFields(metadata), ...(metadata.title === undefined ? [] : [metadata.title])]);
}

/** Whether the listing's fields agree (the title, read from the content, is not one of them). */
export function sameMetadata(a: DocumentMetadata | undefined, b: DocumentMetadata | undefined): boolean {
  return a !== undefined && b !== undefined && JSON.stringify(listedFields(a)) === JSON.stringify(listedFields(b));
}

function listedFields(metadata: DocumentMetadata): unknown[] {
  const meta = Object.fromEntries(Object.entries(metadata.meta).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return [metadata.type, metadata.size ?? null, metadata.modifiedAt ?? null, meta];
}

/** Reads back what metadataKey wrote (the embedded store's column); undefined for '' or anything else. */
export function metadataFromKey(key: string | null | undefined): DocumentMetadata | undefined {
  if (!key) return undefined;
  try {
    const [type, size, modifiedAt, meta, title] = JSON.parse(key) as [string, number | null, number | null, Record<string, string>, string | undefined];
    return { type, size: size ?? undefined, modifiedAt: modifiedAt ?? undefined, meta, ...(typeof title === 'string' ? { title } : {}) };
  } catch {
    return undefined;
  }
}
