/**
 * The embedded store's dense leg, flat scan against its IVF-PQ index (stores/lancedb-ann-index.ts), at the
 * row counts of argo-cd ×1 and ×22 (4,483 and 98,626 chunks). Vectors are synthetic: 384 dimensions (MiniLM's)
 * around 200 random centres, because embedding 100k chunks with a real model does not fit this machine's
 * budget. For each size: dense-leg latency and CPU per query by flat scan, then after compact() builds the
 * index, and recall@10 of the indexed search against LanceDB's exact scan (bypassVectorIndex).
 *
 *   pnpm exec tsx bench/ann-recall.ts [--rows 4483,98626] [--queries 50]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from '@lancedb/lancedb';
import { chunkId } from '../packages/core/src/chunking/chunk-id.ts';
import type { IndexedChunk } from '../packages/core/src/domain.ts';
import { LanceDbStore } from '../packages/core/src/stores/lancedb.ts';

const DIMENSION = 384;
const CENTRES = 200;
const BATCH = 5000;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rows: { type: 'string', default: '4483,98626' }, queries: { type: 'string', default: '50' } } });
  console.log(`load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}`);
  console.log('| rows | flat p50 ms | flat CPU ms/query | ANN p50 ms | ANN CPU ms/query | recall@10 | index build s |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const rows of values.rows.split(',').map(Number)) console.log(await measure(rows, Number(values.queries)));
  console.log(`load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}`);
}

async function measure(rows: number, queryCount: number): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), 'rag-bench-ann-'));
  const random = generator(17);
  const centres = Array.from({ length: CENTRES }, () => Array.from({ length: DIMENSION }, random));
  const vectorNear = (i: number) => centres[i % CENTRES]!.map((value) => value + 0.5 * random());
  const store = new LanceDbStore({ dataDir, collection: 'bench', annMinRows: rows });
  try {
    await store.open({ model: 'synthetic', dimension: DIMENSION });
    for (let start = 0; start < rows; start += BATCH) {
      await store.upsert(Array.from({ length: Math.min(BATCH, rows - start) }, (_, i) => chunkWith(start + i, vectorNear(start + i))));
    }
    const queries = Array.from({ length: queryCount }, (_, i) => vectorNear(i * 7 + 3));
    const flat = await timed(store, queries);
    const started = performance.now();
    await store.compact();
    const buildSeconds = (performance.now() - started) / 1000;
    const indexed = await timed(store, queries);
    const table = await (await connect(join(dataDir, 'lancedb'))).openTable('bench');
    let found = 0;
    for (const [q, query] of queries.entries()) {
      const exact = await table.vectorSearch(query).column('dense').distanceType('cosine').bypassVectorIndex().select(['id']).limit(10).toArray();
      const approximate = new Set(indexed.ids[q]);
      found += exact.filter((row: { id: string }) => approximate.has(row.id)).length;
    }
    const recall = found / (10 * queries.length);
    return `| ${rows} | ${flat.p50.toFixed(1)} | ${flat.cpu.toFixed(1)} | ${indexed.p50.toFixed(1)} | ${indexed.cpu.toFixed(1)} | ${recall.toFixed(3)} | ${buildSeconds.toFixed(1)} |`;
  } finally {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Each query through the store's dense leg alone (an empty sparse query), wall p50 and CPU per query. */
async function timed(store: LanceDbStore, queries: number[][]): Promise<{ p50: number; cpu: number; ids: string[][] }> {
  const walls: number[] = [];
  const ids: string[][] = [];
  const cpu = process.cpuUsage();
  for (const query of queries) {
    const start = performance.now();
    const hits = await store.search({ dense: query, sparse: { indices: [], values: [] }, limit: 10, prefetchLimit: 20, visibleGroups: [] });
    walls.push(performance.now() - start);
    ids.push(hits.map((hit) => hit.id));
  }
  const used = process.cpuUsage(cpu);
  return { p50: walls.sort((a, b) => a - b)[walls.length >> 1]!, cpu: (used.user + used.system) / 1000 / queries.length, ids };
}

function chunkWith(index: number, dense: number[]): IndexedChunk {
  const source = `doc-${index}.md`;
  return { id: chunkId(source, 0), source, headingPath: '', chunkIndex: 0, text: `passage ${index}`, contentHash: `h${index}`, sourceVersion: 'v1', groups: [], dense, sparse: { indices: [index], values: [1] }, ingestedAt: '2026-01-01T00:00:00.000Z' };
}

/** Park–Miller: the same vectors every run. */
function generator(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 16807) % 2147483647) / 2147483647 - 0.5;
}

await main();
