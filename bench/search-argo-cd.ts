/**
 * The query path on a realistic corpus: ingests ../shared/corpora/argo-cd-docs (455 Markdown files)
 * into a fresh embedded index (LanceDB, BM25 only), derives a fixed set of load queries from the
 * corpus itself, then measures `Retriever.search(query, 5)` in process (sequential) and POST /search
 * of the real Fastify app over HTTP with autocannon (10 connections, 10 s, from a child process so
 * that the load generator does not share the server's event loop). `--write` replaces the
 * "Query path: argo-cd docs" section of bench/results.md.
 *
 *   pnpm exec tsx bench/search-argo-cd.ts [--write]
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildQueries, PARAGRAPH_WORDS } from './argo-cd-queries.ts';
import { writeResultsSection } from './results-file.ts';
import { HTTP_CONNECTIONS, HTTP_SECONDS, measure, ROUNDS, runAutocannon, type Distribution } from './search-load.ts';
import type autocannon from 'autocannon';
import { Answerer, createLogger, encodeQuery, ingest, PassageReader, PUBLIC_ONLY, Retriever, Telemetry } from '../packages/core/src/index.ts';
import { LanceDbStore } from '../packages/core/src/embedded.ts';
import { ConverterRegistry, LocalDirectorySource, MarkdownPassthrough } from '../packages/core/src/ingestion.ts';
import { buildApp } from '../services/retrieval/src/app.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const corpus = join(repositoryRoot, '../shared/corpora/argo-cd-docs');
const SECTION = '## Query path: argo-cd docs';

const TOP_K = 5;

async function main(): Promise<void> {
  if (!existsSync(corpus)) {
    console.error(`bench/search-argo-cd.ts needs ${corpus} (it comes with ../shared/corpora); it is absent, nothing measured.`);
    process.exit(1);
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'rag-bench-search-'));
  const logger = createLogger('silent');
  const telemetry = new Telemetry();
  const store = new LanceDbStore({ dataDir, collection: 'bench' });
  try {
    await store.open(null);
    const ingestStarted = performance.now();
    const summary = await ingest({
      source: new LocalDirectorySource(corpus),
      store,
      embedder: undefined,
      converters: new ConverterRegistry([new MarkdownPassthrough()]),
      chunking: { chunkSize: 1200, chunkOverlap: 200 },
      embedBatchSize: 32,
      concurrency: 4,
      prune: true,
      dryRun: false,
      logger,
    });
    const ingestSeconds = (performance.now() - ingestStarted) / 1000;
    if (summary.errors > 0) throw new Error(`ingestion failed: ${summary.toLine()}`);
    const rssAfterIngest = peakRssMiB();
    console.error(`${summary.toLine()} in ${ingestSeconds.toFixed(2)} s`);

    const { queries, documentsWithHeading } = await buildQueries(corpus);
    console.error(`${queries.length} queries, e.g. ${JSON.stringify(queries[0])}`);

    const retriever = new Retriever({ store, embedder: undefined, reranker: undefined, rerankCandidates: 50, telemetry });
    for (const query of queries) await retriever.search(query, TOP_K, PUBLIC_ONLY);
    const empty = (await Promise.all(queries.map((query) => retriever.search(query, TOP_K, PUBLIC_ONLY)))).filter((hits) => hits.length === 0).length;
    const inProcess = await measure(queries, (query) => retriever.search(query, TOP_K, PUBLIC_ONLY));
    const encoding = await measure(queries, async (query) => encodeQuery(query));
    const storeSearch = await measure(queries, (query) => store.search({ sparse: encodeQuery(query), limit: TOP_K, prefetchLimit: 20, visibleGroups: PUBLIC_ONLY }));
    const rssAfterInProcess = peakRssMiB();
    console.error(`in process: p50 ${ms(inProcess.p50)} ms, ${inProcess.perSecond.toFixed(0)} queries/s`);

    const answerer = new Answerer({ retriever, chatModel: undefined, minScore: undefined, telemetry });
    const app = buildApp({ retriever, answerer, passages: new PassageReader(store), telemetry, readinessChecks: [{ name: 'store', check: () => store.checkReady() }], defaultK: TOP_K, logger });
    const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
    let http: autocannon.Result;
    let sequentialHttp: Distribution;
    let serverCpuSeconds: number;
    try {
      sequentialHttp = await measure(queries, async (query) => {
        const response = await fetch(`${baseUrl}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
        if (response.status !== 200) throw new Error(`POST /search answered ${response.status}: ${await response.text()}`);
        await response.arrayBuffer();
      });
      const cpuBefore = process.cpuUsage();
      http = await runAutocannon({ url: baseUrl, queries });
      const cpu = process.cpuUsage(cpuBefore);
      serverCpuSeconds = (cpu.user + cpu.system) / 1e6;
    } finally {
      await app.close();
    }
    console.error(`http: ${http.requests.average.toFixed(0)} requests/s, ${http.errors} errors, ${http.non2xx} non-2xx`);
    if (http.errors > 0 || http.non2xx > 0) throw new Error(`POST /search under load: ${http.errors} errors, ${http.non2xx} non-2xx answers`);

    const section = report({
      files: summary.files,
      chunks: summary.chunks,
      ingestSeconds,
      documentsWithHeading,
      queries,
      empty,
      inProcess,
      encoding,
      storeSearch,
      sequentialHttp,
      http,
      serverCpuSeconds,
      rssAfterIngest,
      rssAfterInProcess,
      rssPeak: peakRssMiB(),
      rssNow: process.memoryUsage().rss / 2 ** 20,
      autocannonVersion: (JSON.parse(await readFile(join(repositoryRoot, 'node_modules/autocannon/package.json'), 'utf8')) as { version: string }).version,
    });
    console.log(section);
    if (process.argv.includes('--write')) await writeResultsSection(SECTION, section);
  } finally {
    await store.close();
    await telemetry.shutdown();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

function ms(value: number): string {
  return value < 10 ? value.toFixed(2) : value.toFixed(1);
}

interface Figures {
  files: number;
  chunks: number;
  ingestSeconds: number;
  documentsWithHeading: number;
  queries: string[];
  empty: number;
  inProcess: Distribution;
  encoding: Distribution;
  storeSearch: Distribution;
  sequentialHttp: Distribution;
  http: autocannon.Result;
  /** CPU time of this process (the server) while autocannon ran. */
  serverCpuSeconds: number;
  rssAfterIngest: number;
  rssAfterInProcess: number;
  rssPeak: number;
  rssNow: number;
  autocannonVersion: string;
}

function report(figures: Figures): string {
  const { inProcess, encoding, storeSearch, sequentialHttp, http } = figures;
  const row = (name: string, d: Distribution) =>
    `| ${name} | ${d.count} | ${ms(d.p50)} | ${ms(d.p95)} | ${ms(d.p99)} | ${ms(d.mean)} | ${d.perSecond.toFixed(0)} |`;
  const requestsPerSecond = http.latency.totalCount / http.duration;
  const examples = [figures.queries[0], figures.queries[Math.floor(figures.queries.length / 2)], figures.queries.at(-1)]
    .map((query) => `\`${query}\``)
    .join(', ');
  return `${SECTION}

\`pnpm exec tsx bench/search-argo-cd.ts --write\`: \`../shared/corpora/argo-cd-docs\` (${figures.files} Markdown files, ${figures.chunks} chunks) ingested in process with the real pipeline into an empty data folder (${figures.ingestSeconds.toFixed(1)} s), embedded default (LanceDB, BM25 only: no EMBED_MODEL, no reranker), top k = ${TOP_K}. Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} CPU cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}.

**Queries.** ${figures.queries.length} load queries made from the corpus, not written by hand: each document with a first-level heading gives the heading's text followed by the first ${PARAGRAPH_WORDS} words of the first prose paragraph after it (front matter, code blocks, lists, tables, quotes and admonitions skipped, Markdown markup removed; the heading alone when no such paragraph follows), and of the ${figures.documentsWithHeading} distinct queries so made, in the order of the documents' paths, ${figures.queries.length} evenly spaced ones are kept, e.g. ${examples}. They load the query path; they do not measure retrieval quality. ${figures.empty === 0 ? 'Every query returns passages.' : `${figures.empty} queries return no passage.`}

**In process**, one query at a time after a warm-up pass over the whole set, ${ROUNDS} passes measured (latency in ms):

| what is timed | queries | p50 | p95 | p99 | mean | queries/s |
| --- | --- | --- | --- | --- | --- | --- |
${row('`Retriever.search(query, 5)`', inProcess)}
${row('`LanceDbStore.search` alone (sparse leg, top 5 of 20 candidates)', storeSearch)}
${row('`encodeQuery` alone (tokenise, stem, hash)', encoding)}
${row('POST /search over HTTP, 1 connection (fetch)', sequentialHttp)}

**Over HTTP under load**: the real app (\`buildApp\`, wired as the API tests wire it) on 127.0.0.1, POST /search \`{"query": …}\` (k = 5) from autocannon ${figures.autocannonVersion} in a child process, ${HTTP_CONNECTIONS} connections, no pipelining, ${HTTP_SECONDS} s, cycling through the queries:

| requests | requests/s | latency p50 (ms) | p97.5 | p99 | mean | max | errors | non-2xx |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
| ${http.latency.totalCount} | ${requestsPerSecond.toFixed(0)} | ${http.latency.p50} | ${http.latency.p97_5} | ${http.latency.p99} | ${http.latency.mean.toFixed(2)} | ${http.latency.max} | ${http.errors} | ${http.non2xx} |

autocannon records latencies in whole milliseconds. The server process used ${figures.serverCpuSeconds.toFixed(1)} s of CPU during the ${http.duration.toFixed(1)} s run (autocannon's measured duration): ${((figures.serverCpuSeconds / http.duration) * 100).toFixed(0)} % of one core, ${ms((figures.serverCpuSeconds * 1000) / http.latency.totalCount)} ms per request. The 1-connection row's client (\`fetch\`) runs in the server's process, so its latency includes the client's work.

Peak RSS of the benchmark process (\`process.resourceUsage().maxRSS\`; the server, not the load generator): ${figures.rssAfterIngest.toFixed(0)} MiB after ingestion, ${figures.rssAfterInProcess.toFixed(0)} MiB after the in-process searches, ${figures.rssPeak.toFixed(0)} MiB at the end (resident then: ${figures.rssNow.toFixed(0)} MiB).

${reading(figures, requestsPerSecond)}
`;
}

function reading(figures: Figures, requestsPerSecond: number): string {
  const { inProcess, encoding, storeSearch, sequentialHttp, http } = figures;
  const storeShare = storeSearch.mean / inProcess.mean;
  const cpuPerRequest = (figures.serverCpuSeconds * 1000) / http.latency.totalCount;
  const littlesLaw = (HTTP_CONNECTIONS / requestsPerSecond) * 1000;
  const searchIsMost = cpuPerRequest < 2 * inProcess.mean;
  return `Reading: the search itself is cheap. In process a query takes ${ms(inProcess.p50)} ms at the median and ${ms(inProcess.mean)} ms on average (${inProcess.perSecond.toFixed(0)} queries/s on one thread), the same order as the ~0.3 ms per in-memory BM25 query that docs/architecture.md gives for 4.6k chunks (${figures.chunks} here). ${(storeShare * 100).toFixed(0)} % of it (by the mean) is the store's search: the in-memory scoring of the sparse leg plus the LanceDB table-version check that \`LanceDbStore\` makes before every search to notice another process's ingest; encoding the query is ${ms(encoding.mean)} ms. One request at a time over HTTP takes ${ms(sequentialHttp.p50)} ms at the median, ${ms(sequentialHttp.p50 - inProcess.p50)} ms more than the search: Fastify, request validation, the JSON of ${TOP_K} passages of up to 1200 characters, the loopback round trip and the client, which runs in the same process. Under load the server spends ${ms(cpuPerRequest)} ms of CPU per request (all its threads, LanceDB's included), ${(cpuPerRequest / inProcess.mean).toFixed(1)}× the search's mean, so ${searchIsMost ? 'the search is most of the work that bounds throughput and the rest of the 1-connection latency is round-trip time rather than server work' : 'the HTTP service around the search, not the search, is most of the work that bounds throughput'}. Under ${HTTP_CONNECTIONS} connections the server answers ${requestsPerSecond.toFixed(0)} requests/s (${(requestsPerSecond / sequentialHttp.perSecond).toFixed(1)}× the 1-connection rate) and latency is mostly queueing: ${HTTP_CONNECTIONS} requests in flight at ${requestsPerSecond.toFixed(0)}/s give ${ms(littlesLaw)} ms by Little's law, against a measured mean of ${http.latency.mean.toFixed(2)} ms. An embedder or a reranker would add its model call to each query and outweigh all of this.`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
