/**
 * Hybrid /search (BM25 + dense, RRF) with a real dense model at argo-cd ×1 and ×22, flat dense scan against
 * the IVF-PQ index (stores/lancedb-ann-index.ts). The compiled bundles as production runs them (scripts/build.ts into
 * .cache/bench-dist first unless `--no-build`), each in its own process.
 *
 * The dense model sits behind a TEI-compatible server in this process (POST /v1/embeddings, as
 * packages/core/src/embedders/tei.ts calls it): all-MiniLM-L6-v2 through bench/real-vectors.ts's on-disk cache,
 * so every distinct text is embedded once, ever. The 22 copies of a chunk differ only by the `copy-NN/` that
 * starts their source, in the prefix line of their text: the server strips it before the cache lookup, so the
 * copies get the ×1 chunk's vector (a model would give them nearly the same vector; embedding 98,626 chunks
 * on 2 shared cores would take hours). Questions are cached too, so /search latency is the retrieval
 * service's own work plus one local HTTP round trip; the model's own time per question is measured apart and
 * printed beside it (what a TEI on the same CPU would add).
 *
 * Per scale: `node dist/ingest/cli.js` into a fresh data folder with EMBEDDED_ANN_MIN_ROWS above the row count
 * (flat scan), `node dist/retrieval/server.js` measured; then LanceDbStore.compact() with the threshold the
 * product would use (the default 50,000 at ×22; 1,000 at ×1, which the default leaves flat) builds the index as
 * the ingest's compaction does, saveSearchView() as the ingest does after it, and a fresh server is measured
 * again. Load: the 176 questions (golden sets + ARGO_CD_QUESTIONS): one connection (a warm-up pass, then
 * `--rounds` passes), then autocannon, 10 connections, 10 s.
 *
 *   pnpm exec tsx bench/dense-scale.ts [--scales 1,22] [--rounds 1] [--no-build]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { AddressInfo } from 'node:net';
import type autocannon from 'autocannon';
import { LocalOnnxEmbedder } from '../packages/core/src/embedders/local-onnx.ts';
import { DEFAULT_ANN_MIN_ROWS } from '../packages/core/src/stores/lancedb-ann-index.ts';
import { LanceDbStore } from '../packages/core/src/stores/lancedb.ts';
import type { CachedEmbedder } from '../eval/src/embedding-cache.ts';
import { ARGO_CD_CORPUS, argoCdQuestions, cachedModel, DEFAULT_MODEL, repositoryRoot } from './real-vectors.ts';
import { measure, runAutocannon, type Distribution } from './search-load.ts';

const MODEL_NAME = 'sentence-transformers/all-MiniLM-L6-v2';
const DIMENSION = 384;
const COLLECTION = 'bench';
const FLAT = '1000000000';
/** The ×1 table is under the default threshold: the index is built from this many rows to measure it there. */
const SMALL_ANN_MIN_ROWS = 1000;
const COPY_PREFIX = /^copy-\d{2}\//;
/** Its own build of the bundles (scripts/build.ts --outdir), so that dist/ stays whatever others built. */
const BUNDLES = '.cache/bench-dist';

interface ServerFigures {
  oneConnection: Distribution;
  load: autocannon.Result;
}

interface ScaleFigures {
  copies: number;
  chunks: number;
  ingestSeconds: number;
  flat: ServerFigures;
  compaction: string;
  buildSeconds: number;
  ann: ServerFigures;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { scales: { type: 'string', default: '1,22' }, rounds: { type: 'string', default: '1' }, 'no-build': { type: 'boolean', default: false } } });
  if (!values['no-build']) await run(process.execPath, ['--import', 'tsx', 'scripts/build.ts', '--outdir', BUNDLES], process.env);
  const embedder = await cachedModel();
  const questions = await argoCdQuestions();
  const modelMs = await modelQueryMs(questions);
  const tei = await startCachingTei(embedder);
  const root = await mkdtemp(join(tmpdir(), 'rag-bench-dense-'));
  const figures: ScaleFigures[] = [];
  try {
    for (const copies of values.scales.split(',').map(Number)) figures.push(await measureScale(root, copies, tei.url, questions, Number(values.rounds)));
  } finally {
    tei.server.close();
    await rm(root, { recursive: true, force: true });
  }
  console.log(report(figures, modelMs, questions.length, embedder));
}

async function measureScale(root: string, copies: number, teiUrl: string, questions: string[], rounds: number): Promise<ScaleFigures> {
  const folder = join(root, `x${copies}`);
  const corpus = join(folder, 'corpus');
  const dataDir = join(folder, 'data');
  try {
    if (copies === 1) await cp(ARGO_CD_CORPUS, corpus, { recursive: true });
    else for (let copy = 1; copy <= copies; copy++) await cp(ARGO_CD_CORPUS, join(corpus, `copy-${String(copy).padStart(2, '0')}`), { recursive: true });
    await mkdir(dataDir, { recursive: true });
    const env = childEnv(dataDir, teiUrl);
    const started = performance.now();
    const summary = await run(process.execPath, [`${BUNDLES}/ingest/cli.js`, corpus], { ...env, EMBEDDED_ANN_MIN_ROWS: FLAT });
    const ingestSeconds = (performance.now() - started) / 1000;
    const chunks = Number(/(\d+) chunks/.exec(summary)?.[1]);
    console.error(`×${copies}: ${summary.trim().split('\n').at(-1)} in ${ingestSeconds.toFixed(0)} s`);
    const flat = await measureServer(env, questions, rounds);
    console.error(`×${copies} flat: p50 ${flat.oneConnection.p50.toFixed(1)} ms, ${requestsPerSecond(flat.load).toFixed(0)} req/s`);
    const store = new LanceDbStore({ dataDir, collection: COLLECTION, annMinRows: copies === 1 ? SMALL_ANN_MIN_ROWS : DEFAULT_ANN_MIN_ROWS });
    const building = performance.now();
    let compaction: string;
    try {
      await store.open({ model: MODEL_NAME, dimension: DIMENSION });
      compaction = await store.compact();
      await store.saveSearchView();
    } finally {
      await store.close();
    }
    const buildSeconds = (performance.now() - building) / 1000;
    console.error(`×${copies}: ${compaction} (${buildSeconds.toFixed(0)} s)`);
    const ann = await measureServer(env, questions, rounds);
    console.error(`×${copies} ANN: p50 ${ann.oneConnection.p50.toFixed(1)} ms, ${requestsPerSecond(ann.load).toFixed(0)} req/s`);
    return { copies, chunks, ingestSeconds, flat, compaction, buildSeconds, ann };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** The model's own time per question (p50, ms), uncached: what /search adds when its embedder runs on the same CPU. */
async function modelQueryMs(questions: string[]): Promise<number> {
  const model = new LocalOnnxEmbedder({ model: process.env.EMBED_MODEL || DEFAULT_MODEL, allowRemote: false });
  await model.embedQuery('warm up');
  const walls: number[] = [];
  for (const question of questions) {
    const start = performance.now();
    await model.embedQuery(question);
    walls.push(performance.now() - start);
  }
  return walls.sort((a, b) => a - b)[walls.length >> 1]!;
}

/** TEI's POST /v1/embeddings ({input, model} → {data: [{embedding, index}]}, as tei.ts documents it) from the cache. */
async function startCachingTei(embedder: CachedEmbedder): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (part: Buffer) => (body += part.toString()));
    request.on('end', () => {
      if (request.method === 'GET' && request.url === '/health') return void response.writeHead(200).end();
      if (request.method !== 'POST' || request.url !== '/v1/embeddings') return void response.writeHead(404).end();
      const input = (JSON.parse(body) as { input: string | string[] }).input;
      const texts = (Array.isArray(input) ? input : [input]).map((text) => text.replace(COPY_PREFIX, ''));
      embedder.embedDocuments(texts).then(
        (vectors) => {
          const data = vectors.map((embedding, index) => ({ object: 'embedding', embedding, index }));
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: MODEL_NAME, usage: { prompt_tokens: 0, total_tokens: 0 } }));
        },
        (error: unknown) => response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error), error_type: 'Unhealthy' })),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function childEnv(dataDir: string, teiUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    RAG_DATA_DIR: dataDir,
    RAG_COLLECTION: COLLECTION,
    LOG_LEVEL: 'warn',
    LANCEDB_LOG: 'error',
    // autocannon sends thousands of requests a minute from one address: the open API's default limit would refuse them.
    RAG_RATE_LIMIT_PER_ADDRESS: '0',
    EMBED_URL: teiUrl,
    EMBED_MODEL: MODEL_NAME,
  };
}

/** Runs a command to its end; its stdout, or an error with its output. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(command, args, { cwd: repositoryRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (part: Buffer) => (stdout += part.toString()));
  child.stderr!.on('data', (part: Buffer) => (stderr = (stderr + part.toString()).slice(-4000)));
  return exitOf(child).then((code) => {
    if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}: ${stdout.slice(-2000)}\n${stderr}`);
    return stdout;
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
  });
}

/** A fresh server on the data folder: the questions on one connection, then under autocannon. */
async function measureServer(env: NodeJS.ProcessEnv, questions: string[], rounds: number): Promise<ServerFigures> {
  const child = spawn(process.execPath, [`${BUNDLES}/retrieval/server.js`], { cwd: repositoryRoot, env: { ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (part: Buffer) => (log = (log + part.toString()).slice(-4000)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      child.stdout!.on('data', (part: Buffer) => {
        output += part.toString();
        const address = /listening on (http:\/\/[\d.]+:\d+)/.exec(output)?.[1];
        if (address) resolve(address);
      });
      child.once('exit', (code) => reject(new Error(`the server exited ${code}: ${output}\n${log}`)));
    });
    const oneConnection = await measure(questions, (question) => search(url, question), rounds);
    const load = await runAutocannon({ url, queries: questions });
    // A request autocannon gives up on (its 10 s timeout) counts as an error: reported, not fatal, since a slow
    // configuration is what this measures.
    if (load.non2xx > 0) throw new Error(`${load.non2xx} non-2xx answers under load`);
    return { oneConnection, load };
  } finally {
    child.kill('SIGTERM');
    await exitOf(child);
  }
}

async function search(url: string, query: string): Promise<void> {
  const response = await fetch(`${url}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`POST /search answered ${response.status}: ${body}`);
}

function requestsPerSecond(load: autocannon.Result): number {
  return load.latency.totalCount / load.duration;
}

function report(figures: ScaleFigures[], modelMs: number, questions: number, embedder: CachedEmbedder): string {
  const rows = figures.flatMap((scale) => [
    `| ×${scale.copies} | ${scale.chunks.toLocaleString('en')} | flat scan | ${scale.flat.oneConnection.p50.toFixed(1)} | ${scale.flat.oneConnection.p95.toFixed(1)} | ${scale.flat.load.latency.p50} | ${requestsPerSecond(scale.flat.load).toFixed(1)} | ${scale.flat.load.errors} |`,
    `| ×${scale.copies} | ${scale.chunks.toLocaleString('en')} | ${/built the dense ANN index/.test(scale.compaction) ? 'IVF-PQ' : 'flat (no index built)'} | ${scale.ann.oneConnection.p50.toFixed(1)} | ${scale.ann.oneConnection.p95.toFixed(1)} | ${scale.ann.load.latency.p50} | ${requestsPerSecond(scale.ann.load).toFixed(1)} | ${scale.ann.load.errors} |`,
  ]);
  const builds = figures.map((scale) => `×${scale.copies}: ingest (flat) ${scale.ingestSeconds.toFixed(0)} s; compact(): ${scale.compaction}, ${scale.buildSeconds.toFixed(0)} s`);
  return `\`pnpm exec tsx bench/dense-scale.ts ${process.argv.slice(2).join(' ')}\`, ${new Date().toISOString().slice(0, 16)} UTC, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} at the end, Node ${process.version}; ${questions} questions; the model embedded ${embedder.counts.embedded} texts, the cache answered ${embedder.counts.cached}.

| scale | chunks | dense leg | /search p50, 1 conn. (ms) | p95 (ms) | p50, 10 conn. (ms) | req/s, 10 conn. | timeouts, 10 conn. |
| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |
${rows.join('\n')}

all-MiniLM-L6-v2's own time per question, p50, uncached, in this process: ${modelMs.toFixed(1)} ms.
${builds.join('\n')}
`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
