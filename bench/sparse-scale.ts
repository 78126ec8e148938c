/**
 * The in-process sparse leg at two scales, without HTTP: ../shared/corpora/argo-cd-docs chunked as the
 * ingest chunks it (CHUNK_SIZE 1200, overlap 200), BM25-encoded, into one SparseIndex (×1) and into
 * another holding `--scale` copies (×22 by default) as bench/scale-argo-cd.ts ingests them: folders
 * copy-01 … copy-22, so each chunk's text starts with its own copy's path (the `<source> > <heading>`
 * prefix) and copies are near-identical vectors, not identical ones. Two query loads, interleaved
 * round by round so both scales see the same machine load: corpus-derived phrases (heading + first
 * words, bench/argo-cd-queries.ts) and natural-language questions (the golden sets' questions and the
 * Argo CD questions written for issue 22). Each search asks for 20 matches, what the retriever asks
 * the store for (MIN_PREFETCH). Reports CPU time (process.cpuUsage) and wall time per query. Both
 * indexes are clustered (SparseIndex.clusterNearDuplicates) as a saved search view is; --unclustered
 * measures them as upserted, the order before clustering existed.
 *
 *   pnpm exec tsx bench/sparse-scale.ts [--scale N] [--rounds R] [--unclustered]
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chunkMarkdown } from '../packages/core/src/chunking/chunk-markdown.ts';
import { encodeDocument, encodeQuery } from '../packages/core/src/sparse/bm25-encoder.ts';
import { SparseIndex } from '../packages/core/src/sparse/sparse-index.ts';
import type { SparseVector } from '../packages/core/src/domain.ts';
import { ARGO_CD_QUESTIONS, buildQueries, goldenQuestions, markdownFiles } from './argo-cd-queries.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const corpus = join(repositoryRoot, '../shared/corpora/argo-cd-docs');
const GOLDEN_SETS = ['eval/golden/project-docs.yaml', 'eval/golden/vllm-gke.yaml'].map((path) => join(repositoryRoot, path));
const LIMIT = 20;
/** As a saved search view is (LanceDbSearchView.saveTo), unless --unclustered asks for the index as upserted. */
let clustered = true;

interface Cost {
  cpuMs: number[];
  wallMs: number[];
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { scale: { type: 'string', default: '22' }, rounds: { type: 'string', default: '3' }, unclustered: { type: 'boolean', default: false } } });
  clustered = !values.unclustered;
  const scale = Number(values.scale);
  const rounds = Number(values.rounds);
  const one = indexOf([await chunkVectors('')]);
  const copies: SparseVector[][] = [];
  for (let copy = 1; copy <= scale; copy++) copies.push(await chunkVectors(`copy-${String(copy).padStart(2, '0')}/`));
  const many = indexOf(copies);
  const loads: Record<string, SparseVector[]> = {
    phrases: (await buildQueries(corpus)).queries.map((query) => encodeQuery(query)),
    questions: [...(await goldenQuestions(GOLDEN_SETS)), ...ARGO_CD_QUESTIONS].map((question) => encodeQuery(question)),
  };
  console.log(`chunks ×1 ${one.size}, ×${scale} ${many.size}; load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}`);
  for (const [load, queries] of Object.entries(loads)) {
    const costs = { one: { cpuMs: [], wallMs: [] } as Cost, many: { cpuMs: [], wallMs: [] } as Cost };
    for (let round = 0; round < rounds; round++) {
      for (const query of queries) {
        time(one, query, costs.one);
        time(many, query, costs.many);
      }
    }
    const line = (name: string, cost: Cost) => `${name}: CPU ${mean(cost.cpuMs).toFixed(3)} ms/query, wall p50 ${median(cost.wallMs).toFixed(3)} ms`;
    const ratio = mean(costs.many.cpuMs) / mean(costs.one.cpuMs);
    console.log(`${load} (${queries.length}, mean ${meanTerms(queries).toFixed(1)} terms): ${line('×1', costs.one)}; ${line(`×${scale}`, costs.many)}; CPU ×${scale}/×1 = ${ratio.toFixed(2)}`);
  }
  console.log(`load average after ${loadavg().map((load) => load.toFixed(1)).join(' ')}`);
}

function time(index: SparseIndex, query: SparseVector, cost: Cost): void {
  const cpu = process.cpuUsage();
  const start = performance.now();
  index.search(query, LIMIT);
  cost.wallMs.push(performance.now() - start);
  const used = process.cpuUsage(cpu);
  cost.cpuMs.push((used.user + used.system) / 1000);
}

/** The corpus's chunks as sparse vectors, each document's source being `folder` + its path in the corpus. */
async function chunkVectors(folder: string): Promise<SparseVector[]> {
  const vectors: SparseVector[] = [];
  for (const path of (await markdownFiles(corpus)).sort()) {
    const chunks = chunkMarkdown(await readFile(path, 'utf8'), folder + relative(corpus, path), { chunkSize: 1200, chunkOverlap: 200 });
    for (const chunk of chunks) vectors.push(encodeDocument(chunk.text));
  }
  return vectors;
}

function indexOf(copies: readonly (readonly SparseVector[])[]): SparseIndex {
  const index = new SparseIndex();
  copies.forEach((documents, copy) => documents.forEach((vector, position) => index.upsert(`${copy}/${position}`, vector)));
  index.trimToSize();
  if (clustered) {
    const start = performance.now();
    index.clusterNearDuplicates();
    console.log(`clustered ${index.size} chunks in ${(performance.now() - start).toFixed(0)} ms: ${index.nearDuplicateGroupCount} groups of near-duplicates holding ${index.nearDuplicateGroupedDocuments} chunks`);
  }
  return index;
}

const mean = (values: number[]) => values.reduce((total, value) => total + value, 0) / values.length;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const meanTerms = (queries: SparseVector[]) => mean(queries.map((query) => query.indices.length));

await main();
