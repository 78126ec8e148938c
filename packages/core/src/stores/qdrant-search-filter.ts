import type { DocumentMetadata } from '../search-filter/document-metadata.ts';
import { isEmptyFilter, type SearchFilter } from '../search-filter/search-controls.ts';

/**
 * Search filters as Qdrant payload conditions, and document metadata as the payload they test:
 * `type`, `size` and `modified_at` (epoch seconds, so `range` applies), `meta` (an object: its keys are filtered as
 * `meta.<key>`); their indexes: qdrant-payload-indexes.ts. A point without a field matches no condition on it
 * ("If the stored value type does not fit the filtering condition - it will be considered not satisfied",
 * https://qdrant.tech/documentation/concepts/payload/#payload-types), as the embedded store reads unknown.
 * https://qdrant.tech/documentation/concepts/filtering/ (match any, range, nested keys)
 */
export function metadataPayload(metadata: DocumentMetadata | undefined): Record<string, unknown> {
  if (!metadata) return {};
  return {
    type: metadata.type,
    ...(metadata.size === undefined ? {} : { size: metadata.size }),
    ...(metadata.modifiedAt === undefined ? {} : { modified_at: metadata.modifiedAt }),
    meta: { ...metadata.meta },
    ...(metadata.title === undefined ? {} : { title: metadata.title }),
  };
}

/** Reads back metadataPayload's fields (listDocuments); undefined for a point written before metadata. */
export function metadataOfPayload(payload: Record<string, unknown>): DocumentMetadata | undefined {
  if (typeof payload.type !== 'string') return undefined;
  const meta = typeof payload.meta === 'object' && payload.meta !== null ? (payload.meta as Record<string, unknown>) : {};
  return {
    type: payload.type,
    size: typeof payload.size === 'number' ? payload.size : undefined,
    modifiedAt: typeof payload.modified_at === 'number' ? payload.modified_at : undefined,
    meta: Object.fromEntries(Object.entries(meta).filter((entry): entry is [string, string] => typeof entry[1] === 'string')),
    ...(typeof payload.title === 'string' ? { title: payload.title } : {}),
  };
}

export const METADATA_PAYLOAD_KEYS = ['type', 'size', 'modified_at', 'meta', 'title'];

/**
 * The `must` conditions of a filter. Qdrant has no glob match, so `source` comes resolved to the indexed sources
 * it matches (`sources`, see QdrantStore.facetValuesMatching) and is sent as `match.any` on the keyword-indexed
 * `source`: exact for every glob, at the cost of one facet call per query that has one. A `title` pattern likewise
 * (`titles`, resolved on the keyword-indexed `title`).
 */
export function filterConditions(filter: SearchFilter | undefined, sources: readonly string[] | undefined, titles?: readonly string[]): Array<Record<string, unknown>> {
  if (!filter || isEmptyFilter(filter)) return [];
  const range = {
    ...(filter.modifiedAfter === undefined ? {} : { gte: filter.modifiedAfter }),
    ...(filter.modifiedBefore === undefined ? {} : { lt: filter.modifiedBefore }),
  };
  return [
    ...(sources ? [{ key: 'source', match: { any: [...sources] } }] : []),
    ...(filter.sourcesIn ? [{ key: 'source', match: { any: [...filter.sourcesIn] } }] : []),
    ...(titles ? [{ key: 'title', match: { any: [...titles] } }] : []),
    ...(filter.types ? [{ key: 'type', match: { any: [...filter.types] } }] : []),
    ...(Object.keys(range).length > 0 ? [{ key: 'modified_at', range }] : []),
    ...Object.entries(filter.meta ?? {}).map(([key, values]) => ({ key: `meta.${key}`, match: { any: [...values] } })),
  ];
}
