import type { Table, VectorQuery } from '@lancedb/lancedb';
import { ANN_NPROBES, ANN_REFINE_FACTOR } from './lancedb-ann-index.ts';
import type { PinnedTable } from './lancedb-pinned-table.ts';
import type { LanceDbSearchView } from './lancedb-search-view.ts';
import { sqlString, visibilityWhere } from './lancedb-sql.ts';

export interface DenseLegQuery {
  vector: number[];
  limit: number;
  visibleGroups: readonly string[];
  /** False for a table older than access groups opened by a dry run: every row is then public. */
  hasGroupsColumn: boolean;
  /** A search filter's matching sources (LanceDbSearchView.matchingSources); absent: every source. */
  sources?: ReadonlySet<string> | undefined;
}

/**
 * The dense leg of a hybrid query, answered from the table version the held search view reflects, as the
 * sparse leg is. A server beside a running ingest keeps the view of the version before the run (see
 * writer-mark.ts): searched in the live table, the dense leg would rank chunks the view does not hold
 * (a hit without a payload) and read groups the view does not have yet, so that a document restricted or
 * deleted mid-run would be hidden by one leg and shown by the other.
 *
 * When the view's version cannot be checked out (a run longer than the versions compaction keeps), the
 * live table answers, and its ids are still cut to the chunks the view holds and shows the caller.
 */
export async function denseLeg(view: LanceDbSearchView, pinned: PinnedTable, liveTable: Table, query: DenseLegQuery): Promise<string[]> {
  const ids = await pinned
    .at(view.snapshot)
    .then((table) => rankByCosine(table, query))
    .catch(() => rankByCosine(liveTable, query));
  const callerGroups = new Set(query.visibleGroups);
  const { sources } = query;
  return ids.filter((id) => view.isVisible(id, callerGroups) && (!sources || sources.has(view.sourceOf(id) ?? '')));
}

async function rankByCosine(table: Table, query: DenseLegQuery): Promise<string[]> {
  const rows = await denseQuery(table, query).toArray();
  return rows.map((row: { id: string }) => row.id);
}

/**
 * The dense leg's LanceDB query: cosine, through the IVF-PQ index where there is one (ANN_NPROBES partitions
 * probed, ANN_REFINE_FACTOR × limit candidates re-ranked on the full vectors), else a flat scan. LanceDB filters
 * before the vector search by default (prefilter), so `limit` visible rows come back.
 */
export function denseQuery(table: Table, { vector, limit, visibleGroups, hasGroupsColumn, sources }: DenseLegQuery): VectorQuery {
  let search = table.vectorSearch(vector).column('dense').distanceType('cosine').nprobes(ANN_NPROBES).refineFactor(ANN_REFINE_FACTOR);
  const conditions = [...(hasGroupsColumn ? [visibilityWhere(visibleGroups)] : []), ...(sources ? [sourcesWhere(sources)] : [])];
  if (conditions.length > 0) search = search.where(conditions.map((condition) => `(${condition})`).join(' AND '));
  return search.select(['id']).limit(limit);
}

/** A search filter resolved to its documents: the filter's fields are all per document (see matchingSources). */
function sourcesWhere(sources: ReadonlySet<string>): string {
  return sources.size === 0 ? 'false' : `source IN (${[...sources].map(sqlString).join(', ')})`;
}
