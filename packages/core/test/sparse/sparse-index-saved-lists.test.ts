/**
 * A saved index's posting lists are built as objects on first use (posting-lists.ts): a server that loads a
 * view of many chunks builds only the lists its queries, edits and saves touch. What a search, a delete, an
 * upsert and a save then give is checked against an index never saved.
 */
import { describe, expect, it } from 'vitest';
import { SparseIndex } from '../../src/sparse/sparse-index.ts';

/** 300 documents over 1,000 indices: document d holds indices d, d + 300 and d + 600 (and 999 for every tenth). */
function upserted(): SparseIndex {
  const index = new SparseIndex();
  for (let d = 0; d < 300; d++) {
    const indices = [d, d + 300, d + 600, ...(d % 10 === 0 ? [999] : [])];
    index.upsert(`doc-${d}`, { indices, values: indices.map((_, i) => 1 + ((d * 7 + i) % 5) / 4) });
  }
  return index;
}

describe('SparseIndex read back from its sections', () => {
  it('builds only the lists a search or an edit uses, and answers as the index it was saved from', () => {
    const original = upserted();
    const loaded = SparseIndex.fromSections(original.toSections());
    expect(loaded.builtPostingLists).toBe(0);

    const query = { indices: [5, 999, 12345], values: [1, 0.5, 1] };
    expect(loaded.search(query, 5)).toEqual(original.search(query, 5));
    // The query's two held indices; 12345 has no list to build.
    expect(loaded.builtPostingLists).toBe(2);

    // A delete takes doc-7 back from the document frequencies of its three lists; an upsert appends to a saved list.
    for (const index of [original, loaded]) {
      index.delete('doc-7');
      index.upsert('doc-new', { indices: [7, 5], values: [2, 3] });
    }
    expect(loaded.builtPostingLists).toBe(5);
    const afterEdits = { indices: [5, 7, 307, 999], values: [1, 1, 1, 1] };
    expect(loaded.search(afterEdits, 10)).toEqual(original.search(afterEdits, 10));

    // Saving walks every list, built or not.
    expect(loaded.toSections()).toEqual(original.toSections());
  });
});
