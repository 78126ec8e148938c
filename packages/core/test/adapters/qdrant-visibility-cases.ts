/**
 * Points whose `groups` payload takes the shapes another tool could write (a string, a number, nested
 * lists...), and who may read each: what Qdrant Edge 0.9.0 (Qdrant's engine, with and without the keyword
 * index) answered to the visibility filter QdrantStore sends, `is_empty` OR `match.any`.
 * https://qdrant.tech/documentation/concepts/filtering/#is-empty ("does not exist, or has null or [] value"),
 * #match-any ("if the stored value is an array, it should have at least one value matching"; a single
 * stored string is a one-value field). Searches and reads by id must agree on every one of them.
 */
import { expect } from 'vitest';
import type { QdrantStore } from '../../src/stores/qdrant.ts';

export const GROUPS_SHAPES: Array<{ name: string; groups?: unknown }> = [
  { name: 'missing' },
  { name: 'null', groups: null },
  { name: 'empty list', groups: [] },
  { name: 'list hr', groups: ['hr'] },
  { name: 'string hr', groups: 'hr' },
  { name: 'hr and a number', groups: ['hr', 5] },
  { name: 'empty string', groups: '' },
  { name: 'number', groups: 5 },
  { name: 'object', groups: { a: 'hr' } },
  { name: 'list of null', groups: [null] },
  { name: 'list of a number', groups: [5] },
  { name: 'nested list', groups: [['hr']] },
];

const PUBLIC = ['missing', 'null', 'empty list'];
export const READERS: Array<{ caller: string[]; reads: string[] }> = [
  { caller: [], reads: PUBLIC },
  { caller: ['support'], reads: PUBLIC },
  { caller: ['hr'], reads: [...PUBLIC, 'list hr', 'string hr', 'hr and a number'] },
];

const idOf = (position: number) => `00000000-0000-4000-8000-${String(position + 1).padStart(12, '0')}`;

/** Writes one point per shape straight through the REST API (QdrantStore itself only writes lists). */
export async function writeGroupsShapes(url: string, collection: string): Promise<void> {
  const points = GROUPS_SHAPES.map(({ name, groups }, position) => ({
    id: idOf(position),
    vector: { dense: [1, position / 10], bm25: { indices: [1], values: [1] } },
    payload: { source: name, heading_path: '', chunk_index: 0, text: name, ...(groups === undefined ? {} : { groups }) },
  }));
  const response = await fetch(`${url}/collections/${collection}/points?wait=true`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ points }) });
  expect(response.status).toBe(200);
}

/** For each caller: what a sparse search, a hybrid search and a read by id return, by shape name. */
export async function expectSearchAndReadAgree(store: QdrantStore): Promise<void> {
  const ids = GROUPS_SHAPES.map((_, position) => idOf(position));
  for (const { caller, reads } of READERS) {
    const query = { sparse: { indices: [1], values: [1] }, limit: 50, prefetchLimit: 50, visibleGroups: caller };
    const sparse = await store.search(query);
    const hybrid = await store.search({ ...query, dense: [1, 0] });
    const read = await store.getChunks(ids, caller);
    const names = (hits: Array<{ source: string }>) => hits.map((hit) => hit.source).sort();
    expect({ caller, sparse: names(sparse), hybrid: names(hybrid), read: names(read) }).toEqual({ caller, sparse: [...reads].sort(), hybrid: [...reads].sort(), read: [...reads].sort() });
  }
}
