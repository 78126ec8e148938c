import { Index, type Table } from '@lancedb/lancedb';

/** Rows from which the embedded store builds an ANN index on the dense column: below it a flat scan is fast enough. */
export const DEFAULT_ANN_MIN_ROWS = 50_000;

/**
 * Partitions searched per query and the share of candidates re-ranked on the full vectors: IVF-PQ ranks on
 * compressed codes, so without a refine step the order (and recall) of the top k drifts from the flat scan's.
 * `nprobes` and `refineFactor` are VectorQuery's (@lancedb/lancedb 0.31.0 dist/query.d.ts); a table without
 * a vector index ignores them and scans every row.
 *
 * Chosen by measurement on real all-MiniLM-L6-v2 vectors (bench/ann-recall-real.ts, bench/results.md): with
 * LanceDB's default index (√rows partitions, dimension/16 sub-vectors) the PQ codes alone give recall@10 0.57,
 * and the exact re-rank is what brings it up: refine 10 reached 0.93, refine 20 reaches 0.96 at nearly the same
 * CPU per query. Probes: recall follows the share of partitions probed, and √rows partitions grow with the
 * table; with 314 partitions (argo-cd ×22's count) 32 probes gave 0.93 and 64 gave 0.96.
 */
export const ANN_NPROBES = 64;
export const ANN_REFINE_FACTOR = 20;

const DENSE_COLUMN = 'dense';

/**
 * After a compaction: the dense column gets an IVF-PQ index (cosine, √rows partitions, LanceDB's default) once
 * the table holds `minRows` rows. An existing index is kept up to date by Table.optimize, which adds new rows
 * to it ("Index: Optimizes the indices, adding new data to existing indices", dist/table.d.ts), so it is built
 * once, not per run. Building writes a new table version beside the data: readers keep answering from the
 * version they hold (PinnedTable), by flat scan until they move to a version with the index.
 * Returns what it did, for the job's log.
 */
export async function ensureAnnIndex(table: Table, minRows: number): Promise<string> {
  // A collection created without an embedder is sparse only: it has no dense column to index.
  if (!(await table.schema()).fields.some((field) => field.name === DENSE_COLUMN)) return 'no dense column (sparse only)';
  if ((await table.listIndices()).some((index) => index.columns.includes(DENSE_COLUMN))) return 'dense ANN index kept up to date';
  const rows = await table.countRows();
  if (rows < minRows) return `dense search scans ${rows} rows (ANN index from ${minRows})`;
  const numPartitions = Math.max(1, Math.round(Math.sqrt(rows)));
  await table.createIndex(DENSE_COLUMN, { config: Index.ivfPq({ distanceType: 'cosine', numPartitions }), replace: true });
  return `built the dense ANN index (IVF-PQ, ${numPartitions} partitions, ${rows} rows)`;
}
