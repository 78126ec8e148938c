/**
 * The embedded store's dense ANN index (stores/lancedb-ann-index.ts) on real embeddings: recall@10 against
 * the exact top 10, latency and CPU per query, for the product's settings and for the tuning around them.
 *
 * Vectors: all-MiniLM-L6-v2 (384-d, EMBED_MODEL to change), embedded once and cached (bench/real-vectors.ts).
 * Two sets:
 *  - `distinct`: argo-cd ×1 (4,483 chunks) and the passages the eval ladder embedded with the same model
 *    (.cache/eval-embeddings: the golden sets' corpora, 6,593 chunks), `--scifact` adds BEIR SciFact (8,650
 *    chunks, slow to embed on a busy CPU), in one table, every text distinct; queries: the golden sets' and
 *    ARGO_CD_QUESTIONS (176) and SciFact's 300 test claims. The honest recall test.
 *  - `x22`: argo-cd ×22 (98,626 rows) as bench/scale-argo-cd.ts builds it: 22 copies of each chunk, which
 *    differ only by the `copy-NN/` of their source, reuse the ×1 chunk's vector (they would embed to nearly the
 *    same vector anyway); queries: the 176 questions. Past EMBEDDED_ANN_MIN_ROWS, so the index is the default one.
 *
 * Recall@10 with ties: a returned row counts as a true neighbour when its exact cosine distance is at most the
 * 10th-smallest exact distance (+1e-6). With distinct texts that is ordinary recall@10; at ×22, where the 22
 * copies of the nearest chunk are 22 equally-true answers, it does not fault the index for picking other copies
 * than a flat scan happens to.
 *
 * The product's path is measured first: LanceDbStore.compact() builds the index (the distinct set is under the
 * 50,000-row default, so its store gets `annMinRows` 1,000), then LanceDbStore.search with an empty sparse query
 * (the dense leg alone, ANN_NPROBES and ANN_REFINE_FACTOR). Then the sweep queries the same table directly, with
 * the dense leg's own filter (public rows), for each nprobes × refine factor, and, for the distinct set, with
 * the index rebuilt with other partition and sub-vector counts.
 *
 *   pnpm exec tsx bench/ann-recall-real.ts [--sets distinct,x22] [--scifact] [--product-only] [--nprobes 8,16,32,64] [--refine 0,5,10,20]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect, Index, type Table } from '@lancedb/lancedb';
import { chunkId } from '../packages/core/src/chunking/chunk-id.ts';
import type { IndexedChunk } from '../packages/core/src/domain.ts';
import { ANN_NPROBES, ANN_REFINE_FACTOR, DEFAULT_ANN_MIN_ROWS } from '../packages/core/src/stores/lancedb-ann-index.ts';
import { visibilityWhere } from '../packages/core/src/stores/lancedb-sql.ts';
import { LanceDbStore } from '../packages/core/src/stores/lancedb.ts';
import { argoCdPassages, argoCdQuestions, cachedModel, evalLadderVectors, passageVectors, queryVectors, scifactPassages, scifactQueries } from './real-vectors.ts';

const COPIES = 22;
const K = 10;
const BATCH = 5000;
/** The sweep's defaults (`--nprobes`, `--refine`); refine 0: no refine step (ranked on the PQ codes alone). */
let NPROBES = [8, 16, 32, 64];
let REFINE_FACTORS = [0, 5, 10, 20];
const COLLECTION = 'bench';

interface VectorSet {
  name: string;
  rows: Float32Array[];
  /** The source of each row (its copy's, at ×22). */
  sources: string[];
  queries: Float32Array[];
  annMinRows: number;
}

interface Outcome {
  recall: number;
  p50: number;
  cpu: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sets: { type: 'string', default: 'distinct,x22' }, scifact: { type: 'boolean', default: false }, 'product-only': { type: 'boolean', default: false }, nprobes: { type: 'string' }, refine: { type: 'string' } } });
  if (values.nprobes) NPROBES = values.nprobes.split(',').map(Number);
  if (values.refine) REFINE_FACTORS = values.refine.split(',').map(Number);
  const embedder = await cachedModel();
  const argo = await argoCdPassages();
  const argoVectors = (await passageVectors(embedder, argo.map((passage) => passage.text), 'argo-cd')).map((vector) => Float32Array.from(vector));
  const questions = (await queryVectors(embedder, await argoCdQuestions())).map((vector) => Float32Array.from(vector));
  console.log(`load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}; ${embedder.counts.embedded} texts embedded by the model, ${embedder.counts.cached} from the cache`);
  for (const name of values.sets.split(',')) {
    if (name === 'x22') {
      const rows = Array.from({ length: COPIES }, () => argoVectors).flat();
      const sources = Array.from({ length: COPIES }, (_, copy) => argo.map((passage) => `copy-${String(copy + 1).padStart(2, '0')}/${passage.source}`)).flat();
      await measureSet({ name: `argo-cd ×${COPIES}`, rows, sources, queries: questions, annMinRows: DEFAULT_ANN_MIN_ROWS }, false);
    } else if (name === 'distinct') {
      const others = await evalLadderVectors(argoVectors[0]!.length);
      const scifact = values.scifact ? await scifactPassages() : [];
      const scifactVectors = (await passageVectors(embedder, scifact.map((passage) => passage.text), 'scifact')).map((vector) => Float32Array.from(vector));
      const claims = (await queryVectors(embedder, await scifactQueries())).map((vector) => Float32Array.from(vector));
      const rows = [...argoVectors, ...others, ...scifactVectors];
      const sources = [...argo.map((passage) => passage.source), ...others.map((_, i) => `eval-ladder-${i}`), ...scifact.map((passage) => passage.source)];
      const name = `argo-cd ×1 (${argo.length}) + the eval ladder's passages (${others.length})${values.scifact ? ` + SciFact (${scifact.length})` : ''}, distinct texts`;
      await measureSet({ name, rows, sources, queries: [...questions, ...claims], annMinRows: 1000 }, !values['product-only']);
    } else throw new Error(`unknown set ${name}: distinct or x22`);
  }
  console.log(`load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}`);
}

async function measureSet(set: VectorSet, otherBuilds: boolean): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'rag-bench-ann-real-'));
  const store = new LanceDbStore({ dataDir, collection: COLLECTION, annMinRows: set.annMinRows });
  try {
    await store.open({ model: 'all-minilm-l6-v2', dimension: set.rows[0]!.length });
    for (let start = 0; start < set.rows.length; start += BATCH) {
      await store.upsert(set.rows.slice(start, start + BATCH).map((vector, i) => rowChunk(start + i, set.sources[start + i]!, vector)));
    }
    const truth = exactTopDistances(set);
    const table = await (await connect(join(dataDir, 'lancedb'))).openTable(COLLECTION);
    await table.optimize();
    const flat = await sweepPoint(table, set, truth, { bypass: true });
    const started = performance.now();
    const compaction = await store.compact();
    const buildSeconds = (performance.now() - started) / 1000;
    await table.checkoutLatest();
    const product = await productPath(store, set, truth);
    console.log(`\n### ${set.name}: ${set.rows.length} rows, ${set.queries.length} queries\n`);
    console.log(`compact(): ${compaction} in ${buildSeconds.toFixed(1)} s`);
    console.log(`flat scan (bypassVectorIndex): recall@10 ${flat.recall.toFixed(3)}, p50 ${flat.p50.toFixed(2)} ms, CPU ${flat.cpu.toFixed(2)} ms/query`);
    console.log(`product dense leg (LanceDbStore.search, nprobes ${ANN_NPROBES}, refine ${ANN_REFINE_FACTOR}): recall@10 ${product.recall.toFixed(3)}, p50 ${product.p50.toFixed(2)} ms, CPU ${product.cpu.toFixed(2)} ms/query`);
    if (!compaction.includes('built the dense ANN index')) return;
    const partitions = Math.max(1, Math.round(Math.sqrt(set.rows.length)));
    await sweep(table, set, truth, `IVF-PQ as built by compact(): ${partitions} partitions, ${set.rows[0]!.length / 16} sub-vectors (LanceDB default)`);
    if (!otherBuilds) return;
    for (const [numPartitions, numSubVectors] of [
      [partitions, 48],
      [partitions, 96],
      [Math.round(partitions / 4), 48],
      // argo-cd ×22's √rows: as many partitions as the 98,626-row index has, over fewer rows (each partition thinner).
      [314, 24],
    ] as const) {
      const built = performance.now();
      await table.createIndex('dense', { config: Index.ivfPq({ distanceType: 'cosine', numPartitions, numSubVectors }), replace: true });
      await sweep(table, set, truth, `IVF-PQ rebuilt: ${numPartitions} partitions, ${numSubVectors} sub-vectors (built in ${((performance.now() - built) / 1000).toFixed(1)} s)`);
    }
  } finally {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function sweep(table: Table, set: VectorSet, truth: number[], title: string): Promise<void> {
  console.log(`\n${title}: recall@10 / p50 ms / CPU ms per query\n`);
  console.log(`| nprobes | ${REFINE_FACTORS.map((factor) => (factor === 0 ? 'no refine' : `refine ${factor}`)).join(' | ')} |`);
  console.log(`| ---: | ${REFINE_FACTORS.map(() => '---').join(' | ')} |`);
  for (const nprobes of NPROBES) {
    const cells: string[] = [];
    for (const refineFactor of REFINE_FACTORS) {
      const point = await sweepPoint(table, set, truth, { nprobes, refineFactor });
      cells.push(`${point.recall.toFixed(3)} / ${point.p50.toFixed(1)} / ${point.cpu.toFixed(1)}`);
    }
    console.log(`| ${nprobes} | ${cells.join(' | ')} |`);
  }
}

/** The dense leg's query on the table itself (its filter included), with the given search parameters. */
async function sweepPoint(table: Table, set: VectorSet, truth: number[], options: { bypass?: boolean; nprobes?: number; refineFactor?: number }): Promise<Outcome> {
  return timedRecall(set, truth, async (query) => {
    let search = table.vectorSearch(query).column('dense').distanceType('cosine').where(visibilityWhere([]));
    if (options.bypass) search = search.bypassVectorIndex();
    if (options.nprobes) search = search.nprobes(options.nprobes);
    if (options.refineFactor) search = search.refineFactor(options.refineFactor);
    return (await search.select(['id']).limit(K).toArray()).map((row: { id: string }) => row.id);
  });
}

/** The product: the store's hybrid search with an empty sparse query leaves the ranking to the dense leg. */
function productPath(store: LanceDbStore, set: VectorSet, truth: number[]): Promise<Outcome> {
  return timedRecall(set, truth, async (query) => {
    const hits = await store.search({ dense: Array.from(query), sparse: { indices: [], values: [] }, limit: K, prefetchLimit: K, visibleGroups: [] });
    return hits.map((hit) => hit.id);
  });
}

async function timedRecall(set: VectorSet, truth: number[], search: (query: Float32Array) => Promise<string[]>): Promise<Outcome> {
  const rowOf = rowIndex(set);
  await search(set.queries[0]!);
  const walls: number[] = [];
  let found = 0;
  const cpu = process.cpuUsage();
  for (const [q, query] of set.queries.entries()) {
    const start = performance.now();
    const ids = await search(query);
    walls.push(performance.now() - start);
    found += ids.filter((id) => distance(query, set.rows[rowOf.get(id)!]!) <= truth[q]! + 1e-6).length;
  }
  const used = process.cpuUsage(cpu);
  return { recall: found / (K * set.queries.length), p50: walls.sort((a, b) => a - b)[walls.length >> 1]!, cpu: (used.user + used.system) / 1000 / set.queries.length };
}

const rowIndexes = new WeakMap<VectorSet, Map<string, number>>();
function rowIndex(set: VectorSet): Map<string, number> {
  let map = rowIndexes.get(set);
  if (!map) {
    map = new Map(set.sources.map((source, i) => [chunkId(source, i), i]));
    rowIndexes.set(set, map);
  }
  return map;
}

/** For each query, its 10th-smallest exact cosine distance over every row. */
function exactTopDistances(set: VectorSet): number[] {
  return set.queries.map((query) => {
    const top: number[] = [];
    for (const row of set.rows) {
      const d = distance(query, row);
      if (top.length < K || d < top[K - 1]!) {
        top.push(d);
        top.sort((a, b) => a - b);
        if (top.length > K) top.pop();
      }
    }
    return top[K - 1]!;
  });
}

/** Cosine distance, as LanceDB's `cosine` distance type: 1 − cos. */
function distance(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

function rowChunk(index: number, source: string, dense: Float32Array): IndexedChunk {
  return { id: chunkId(source, index), source, headingPath: '', chunkIndex: index, text: `passage ${index}`, contentHash: `h${index}`, sourceVersion: 'v1', groups: [], dense: Array.from(dense), sparse: { indices: [index], values: [1] }, ingestedAt: '2026-01-01T00:00:00.000Z' };
}

await main();
