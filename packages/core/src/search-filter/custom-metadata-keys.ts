/**
 * Which custom metadata keys become search fields. Each key a document brings becomes a Qdrant payload index on
 * `meta.<key>` (qdrant-payload-indexes.ts), and anyone who can upload to the bucket chooses the keys: a key that is
 * not a plain name (a dot or bracket addresses another payload path, https://qdrant.tech/documentation/concepts/payload/#nested-key)
 * failed the whole write batch and skipped pruning, and a thousand keys made a thousand indexes. A key is kept when
 * the search filter could name it (search-controls.ts takes the same characters), at most MAX_CUSTOM_FIELDS per
 * document in key order; the others are left out and reported, never failing the document.
 */
export const CUSTOM_FIELD_KEY = /^[A-Za-z0-9_-]{1,100}$/;
export const MAX_CUSTOM_FIELDS = 32;

export interface CustomFields {
  meta: Record<string, string>;
  /** The keys left out: an invalid name, or past the cap. */
  ignoredKeys: string[];
}

export function customFieldsOf(fields: Record<string, string>): CustomFields {
  const meta: Record<string, string> = {};
  const ignoredKeys: string[] = [];
  for (const key of Object.keys(fields).sort()) {
    if (CUSTOM_FIELD_KEY.test(key) && Object.keys(meta).length < MAX_CUSTOM_FIELDS) meta[key] = fields[key]!;
    else ignoredKeys.push(key);
  }
  return { meta, ignoredKeys };
}
