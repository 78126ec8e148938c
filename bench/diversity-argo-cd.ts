/**
 * What max_per_source does to the top 5 on a real corpus: ingests ../shared/corpora/argo-cd-docs (455 Markdown
 * files) into a fresh embedded index, asks one query per document (its first heading and the first words after
 * it, bench/argo-cd-queries.ts's queryOf; evenly spaced, at most 300) and counts, without the cap and with caps
 * of 1 and 2: distinct sources in the top 5, and hit@5 / MRR of the document the query came from. Runs BM25 only,
 * and hybrid with the Model2Vec model of `pnpm models:fetch` when .cache/models/minilm-l6-static exists.
 *
 *   pnpm exec tsx bench/diversity-argo-cd.ts
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdownFiles, queryOf, QUERY_COUNT } from './argo-cd-queries.ts';
import { createLogger, ingest, PUBLIC_ONLY, Retriever, Telemetry, type Embedder } from '../packages/core/src/index.ts';
import { LanceDbStore } from '../packages/core/src/embedded.ts';
import { Model2VecEmbedder } from '../packages/core/src/embedders/model2vec.ts';
import { ConverterRegistry, LocalDirectorySource, MarkdownPassthrough } from '../packages/core/src/ingestion.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const corpus = join(repositoryRoot, '../shared/corpora/argo-cd-docs');
const staticModel = join(repositoryRoot, '.cache/models/minilm-l6-static');
const TOP_K = 5;
const CAPS: Array<number | undefined> = [undefined, 2, 1];

interface LabelledQuery {
  query: string;
  source: string;
}

async function labelledQueries(): Promise<LabelledQuery[]> {
  const all: LabelledQuery[] = [];
  for (const path of (await markdownFiles(corpus)).map((file) => relative(corpus, file)).sort()) {
    const query = queryOf(await readFile(join(corpus, path), 'utf8'));
    if (query && !all.some((known) => known.query === query)) all.push({ query, source: path });
  }
  const step = Math.max(1, all.length / QUERY_COUNT);
  return Array.from({ length: Math.min(QUERY_COUNT, all.length) }, (_, n) => all[Math.floor(n * step)]!);
}

async function measureMode(name: string, embedder: Embedder | undefined, queries: LabelledQuery[]): Promise<string[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'rag-bench-diversity-'));
  const store = new LanceDbStore({ dataDir, collection: 'bench' });
  const telemetry = new Telemetry();
  try {
    await store.open(embedder ? await embedder.describe() : null);
    await ingest({
      source: new LocalDirectorySource(corpus),
      store,
      embedder,
      converters: new ConverterRegistry([new MarkdownPassthrough()]),
      chunking: { chunkSize: 1200, chunkOverlap: 200 },
      embedBatchSize: 32,
      concurrency: 2,
      prune: false,
      dryRun: false,
      logger: createLogger('silent'),
    });
    const retriever = new Retriever({ store, embedder, rerankCandidates: 50, telemetry });
    const rows: string[] = [];
    for (const cap of CAPS) {
      let distinct = 0;
      let hits = 0;
      let reciprocalRanks = 0;
      for (const { query, source } of queries) {
        const sources = (await retriever.search(query, TOP_K, PUBLIC_ONLY, undefined, { maxPerSource: cap })).map((hit) => hit.source);
        distinct += new Set(sources).size;
        const rank = sources.indexOf(source);
        if (rank >= 0) {
          hits += 1;
          reciprocalRanks += 1 / (rank + 1);
        }
      }
      const n = queries.length;
      rows.push(`| ${name} | ${cap ?? 'none'} | ${(distinct / n).toFixed(2)} | ${(hits / n).toFixed(3)} | ${(reciprocalRanks / n).toFixed(3)} |`);
      console.error(rows.at(-1));
    }
    return rows;
  } finally {
    await store.close();
    await telemetry.shutdown();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (!existsSync(corpus)) {
    console.error(`bench/diversity-argo-cd.ts needs ${corpus}; it is absent, nothing measured.`);
    process.exit(1);
  }
  const queries = await labelledQueries();
  const rows = await measureMode('BM25', undefined, queries);
  if (existsSync(staticModel)) rows.push(...(await measureMode('hybrid (Model2Vec minilm-l6-static)', new Model2VecEmbedder({ model: staticModel }), queries)));
  else console.error(`${staticModel} is absent (pnpm models:fetch): hybrid not measured.`);
  console.log(`${queries.length} queries, top ${TOP_K}, the query's own document as the relevant one\n`);
  console.log('| search | max_per_source | distinct sources in top 5 | hit@5 | MRR |\n| --- | --- | --- | --- | --- |');
  console.log(rows.join('\n'));
}

await main();
