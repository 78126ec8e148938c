import type { DocumentMetadata } from '../search-filter/document-metadata.ts';

/**
 * The payload indexes of the keys search filters test: Qdrant filters an unindexed key by reading every candidate's
 * payload, and a facet (how a `source` glob is resolved) needs a keyword index. `source`, `type`, `title` and each
 * custom `meta.<key>` are keywords; `modified_at` holds epoch seconds, so an integer index serves its `range`
 * condition (a `datetime` index would need RFC 3339 strings in the payload).
 * PUT /collections/{c}/index {field_name, field_schema}: https://api.qdrant.tech/api-reference/indexes/create-field-index
 * (field_schema: keyword, integer, float, bool, geo, datetime, text, uuid: https://qdrant.tech/documentation/manage-data/indexing/#payload-index)
 */
export interface PayloadIndex {
  field: string;
  schema: 'keyword' | 'integer';
}

const FIXED_INDEXES: readonly PayloadIndex[] = [
  { field: 'source', schema: 'keyword' },
  { field: 'type', schema: 'keyword' },
  { field: 'modified_at', schema: 'integer' },
  { field: 'title', schema: 'keyword' },
];

/** The indexes a write of documents with this metadata needs: the fixed ones, then each custom key seen, sorted. */
export function payloadIndexesFor(metadata: Iterable<DocumentMetadata | undefined>): PayloadIndex[] {
  const keys = new Set<string>();
  for (const each of metadata) for (const key of Object.keys(each?.meta ?? {})) keys.add(key);
  return [...FIXED_INDEXES, ...[...keys].sort().map((key) => ({ field: `meta.${key}`, schema: 'keyword' as const }))];
}
