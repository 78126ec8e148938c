/**
 * The embedded default (LanceDB, BM25 only) at two scales in one run: ../shared/corpora/argo-cd-docs
 * as it is (×1) and copied 22 times into sibling folders copy-01 … copy-22 (×22, `--scale N` to change
 * 22). For each scale, with the compiled bundles as production runs them (`pnpm build` first unless
 * `--no-build`), each in its own process with a fresh RAG_DATA_DIR: the first ingest and the unchanged
 * re-run of `node dist/ingest/cli.js` (wall time, the job's own sync time, peak RSS), the data folder's
 * size on disk, then `node dist/retrieval/server.js`: time from spawn to the first POST /search 200 and
 * to GET /readyz 200, RSS after the first answer and after the load, POST /search latency on one
 * connection (corpus-derived queries, the same at both scales, and natural-language questions) and
 * under autocannon (10 connections, 10 s), once with each of the two loads (phrases, questions). Prints a table with the targets of issue 11, and a linear
 * projection to 1,000,000 chunks; `--write` replaces the "Scale: argo-cd docs ×22 against ×1" section
 * of bench/results.md.
 *
 *   pnpm exec tsx bench/scale-argo-cd.ts [--write] [--scale N] [--no-build]
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type autocannon from 'autocannon';
import { ARGO_CD_QUESTIONS, buildQueries, goldenQuestions } from './argo-cd-queries.ts';
import { writeResultsSection } from './results-file.ts';
import { exitOf, listeningUrl, POLL_MS, postSearch, search, untilOk } from './server-process.ts';
import { HTTP_CONNECTIONS, HTTP_SECONDS, measure, ROUNDS, runAutocannon, type Distribution } from './search-load.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const corpus = join(repositoryRoot, '../shared/corpora/argo-cd-docs');
/** Golden sets whose questions join the question load (the argo-cd corpus has none of its own). */
const GOLDEN_SETS = ['eval/golden/project-docs.yaml', 'eval/golden/vllm-gke.yaml'].map((path) => join(repositoryRoot, path));
const INGEST_BUNDLE = 'dist/ingest/cli.js';
const SERVER_BUNDLE = 'dist/retrieval/server.js';
const GNU_TIME = '/usr/bin/time';
const DEFAULT_SCALE = 22;
const PROJECTED_CHUNKS = 1_000_000;

/** The server's default k (TOP_K): the requests send only the query. */
const TOP_K = 5;

interface IngestRun {
  summary: string;
  files: number;
  chunks: number;
  upserts: number;
  wallSeconds: number;
  syncSeconds: number;
  peakRssMiB: number;
}

interface ServerRun {
  listeningSeconds: number;
  firstSearchSeconds: number;
  readySeconds: number;
  rssAfterFirstSearch: number;
  rssAfterLoad: number;
  peakRss: number;
  queries: Distribution;
  questions: Distribution;
  load: autocannon.Result;
  /** The same 10-connection load with natural-language questions: what users send, and the costlier one for sparse search. */
  questionLoad: autocannon.Result;
  /** The server's CPU time per request under each 10-connection load (ms). */
  loadCpuMs: number;
  questionLoadCpuMs: number;
  exit: string;
}

interface ScaleRun {
  copies: number;
  first: IngestRun;
  rerun: IngestRun;
  dataDirMiB: number;
  server: ServerRun;
}

interface QueryLists {
  queries: string[];
  questions: string[];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      write: { type: 'boolean', default: false },
      scale: { type: 'string', default: String(DEFAULT_SCALE) },
      'no-build': { type: 'boolean', default: false },
    },
  });
  const scale = Number(values.scale);
  if (!Number.isInteger(scale) || scale < 2 || scale > 99) throw new Error(`--scale expects an integer from 2 to 99, not ${values.scale}`);
  if (!existsSync(corpus)) {
    console.error(`bench/scale-argo-cd.ts needs ${corpus} (it comes with ../shared/corpora); it is absent, nothing measured.`);
    process.exit(1);
  }
  if (!values['no-build']) await build();
  for (const bundle of [INGEST_BUNDLE, SERVER_BUNDLE]) {
    if (!existsSync(join(repositoryRoot, bundle))) throw new Error(`${bundle} is absent: run without --no-build (or pnpm build)`);
  }
  const lists: QueryLists = { queries: (await buildQueries(corpus)).queries, questions: [...(await goldenQuestions(GOLDEN_SETS)), ...ARGO_CD_QUESTIONS] };
  console.error(`${lists.queries.length} queries, e.g. ${JSON.stringify(lists.queries[0])}; ${lists.questions.length} questions, e.g. ${JSON.stringify(lists.questions[0])}`);
  const root = await mkdtemp(join(tmpdir(), 'rag-bench-scale-'));
  try {
    const one = await measureScale(root, 1, lists);
    const many = await measureScale(root, scale, lists);
    const section = report(one, many, lists);
    console.log(section);
    if (values.write) await writeResultsSection(sectionTitle(scale), section);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** `pnpm build` (scripts/build.ts) into the repository's dist/, so the bundles measured are the current code's. */
function build(): Promise<void> {
  console.error('building dist/ (scripts/build.ts)');
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: repositoryRoot, stdio: ['ignore', 2, 2] });
  return exitOf(child).then(({ code }) => {
    if (code !== 0) throw new Error(`scripts/build.ts exited ${code}`);
  });
}

/** One scale: the corpus copied `copies` times, ingested twice into a fresh data folder, then served. */
async function measureScale(root: string, copies: number, lists: QueryLists): Promise<ScaleRun> {
  const folder = join(root, `x${copies}`);
  const source = join(folder, 'corpus');
  const dataDir = join(folder, 'data');
  try {
    await copyCorpus(source, copies);
    await mkdir(dataDir, { recursive: true });
    const first = await ingestOnce(source, dataDir);
    console.error(`×${copies} first ingest: ${first.summary} (${first.wallSeconds.toFixed(1)} s, sync ${first.syncSeconds.toFixed(2)} s, peak ${first.peakRssMiB.toFixed(0)} MiB)`);
    const dataDirMiB = (await folderBytes(dataDir)) / 2 ** 20;
    const rerun = await ingestOnce(source, dataDir);
    console.error(`×${copies} re-run: ${rerun.summary} (${rerun.wallSeconds.toFixed(2)} s, sync ${rerun.syncSeconds.toFixed(2)} s, peak ${rerun.peakRssMiB.toFixed(0)} MiB)`);
    if (rerun.upserts !== 0) throw new Error(`the unchanged re-run wrote: ${rerun.summary}`);
    const server = await measureServer(dataDir, lists);
    console.error(
      `×${copies} server: first /search 200 after ${server.firstSearchSeconds.toFixed(2)} s, RSS ${server.rssAfterFirstSearch.toFixed(0)} → ${server.rssAfterLoad.toFixed(0)} MiB, p50 ${server.queries.p50.toFixed(2)} ms, ${requestsPerSecond(server.load).toFixed(0)} req/s under load`,
    );
    return { copies, first, rerun, dataDirMiB, server };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** ×1: the corpus folder as it is; ×N: N copies side by side, copy-01 … copy-NN, so every document is distinct. */
async function copyCorpus(target: string, copies: number): Promise<void> {
  if (copies === 1) return cp(corpus, target, { recursive: true });
  for (let copy = 1; copy <= copies; copy += 1) await cp(corpus, join(target, `copy-${String(copy).padStart(2, '0')}`), { recursive: true });
}

/** What every child gets: the embedded default, nothing from this shell's configuration. */
function childEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    RAG_DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    LANCEDB_LOG: 'error',
    // autocannon sends thousands of requests a minute from one address: the open API's default limit would refuse them.
    RAG_RATE_LIMIT_PER_ADDRESS: '0',
    QDRANT_URL: '',
    EMBED_URL: '',
    EMBED_MODEL: '',
    DOCLING_URL: '',
    GCS_BUCKET: '',
    ...extra,
  };
}

/** One `node dist/ingest/cli.js <source>` in its own process, under GNU time when it exists (peak RSS). */
async function ingestOnce(source: string, dataDir: string): Promise<IngestRun> {
  const node = [process.execPath, INGEST_BUNDLE, source];
  const timed = existsSync(GNU_TIME);
  const [command, ...args] = timed ? [GNU_TIME, '-v', ...node] : node;
  const started = performance.now();
  const child = spawn(command!, args, { cwd: repositoryRoot, env: childEnv(dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (part: Buffer) => (stdout += part.toString()));
  child.stderr!.on('data', (part: Buffer) => (stderr += part.toString()));
  let polledPeak = 0;
  const poll = timed
    ? undefined
    : setInterval(() => {
        memoryOf(child.pid!).then((memory) => (polledPeak = Math.max(polledPeak, memory.peak)), () => undefined);
      }, POLL_MS);
  const { code } = await exitOf(child);
  const wallSeconds = (performance.now() - started) / 1000;
  clearInterval(poll);
  const summary = stdout.trimEnd().split('\n').at(-1) ?? '';
  const count = (label: string) => Number(new RegExp(`(\\d+) ${label}`).exec(summary)?.[1] ?? NaN);
  if (code !== 0 || !summary.startsWith('done:') || count('errors') !== 0) throw new Error(`ingest exited ${code}: ${summary}\n${stderr.slice(-2000)}`);
  const peakRssMiB = timed ? peakRssOf(stderr) : polledPeak;
  return { summary, files: count('files'), chunks: count('chunks'), upserts: count('upserts'), wallSeconds, syncSeconds: syncSecondsOf(stderr), peakRssMiB };
}

/** The job's own measure of the sync, from its `ingest finished` log line: process start-up and compaction excluded. */
function syncSecondsOf(log: string): number {
  for (const line of log.split('\n')) {
    if (!line.includes('"ingest finished"')) continue;
    return (JSON.parse(line) as { seconds: number }).seconds;
  }
  return Number.NaN;
}

function peakRssOf(timeOutput: string): number {
  const kilobytes = /Maximum resident set size \(kbytes\): (\d+)/.exec(timeOutput)?.[1];
  return kilobytes ? Number(kilobytes) / 1024 : Number.NaN;
}

/** VmRSS and VmHWM of a process, in MiB. */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/** Clock ticks per second of /proc/PID/stat's times (USER_HZ, 100 on Linux: `getconf CLK_TCK`). */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds a process has used, user plus system (/proc/PID/stat fields 14 and 15, proc(5)). */
async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may hold spaces, closed by the last ')': field 3 is the state.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[14 - 3]) + Number(fields[15 - 3])) / CLOCK_TICKS_PER_SECOND;
}

/** The load, and the server's CPU milliseconds per request it answered meanwhile. */
async function loadWithCpu(pid: number, url: string, queries: string[]): Promise<{ load: autocannon.Result; cpuMsPerRequest: number }> {
  const before = await cpuSecondsOf(pid);
  const load = await runAutocannon({ url, queries });
  const cpuSeconds = (await cpuSecondsOf(pid)) - before;
  return { load, cpuMsPerRequest: (cpuSeconds * 1000) / load.latency.totalCount };
}

/** Bytes of every file under a folder, recursively. */
async function folderBytes(folder: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) total += await folderBytes(path);
    else if (entry.isFile()) total += (await lstat(path)).size;
  }
  return total;
}

/** The compiled server on the scale's data folder: start, memory, latency on one connection, then under load. */
async function measureServer(dataDir: string, lists: QueryLists): Promise<ServerRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [SERVER_BUNDLE], { cwd: repositoryRoot, env: childEnv(dataDir, { PORT: '0' }), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderrTail = '';
  child.stderr!.on('data', (part: Buffer) => (stderrTail = (stderrTail + part.toString()).slice(-4000)));
  try {
    const url = await listeningUrl(child, () => stderrTail);
    const listeningSeconds = (performance.now() - started) / 1000;
    const pid = child.pid!;
    let rssAfterFirstSearch = Number.NaN;
    const [firstSearchSeconds, readySeconds] = await Promise.all([
      untilOk(() => postSearch(url, lists.queries[0]!), started).then(async (seconds) => {
        rssAfterFirstSearch = (await memoryOf(pid)).rss;
        return seconds;
      }),
      untilOk(() => fetch(`${url}/readyz`), started),
    ]);
    const queries = await measure(lists.queries, (query) => search(url, query));
    const questions = await measure(lists.questions, (query) => search(url, query));
    const { load, cpuMsPerRequest: loadCpuMs } = await loadWithCpu(pid, url, lists.queries);
    const { load: questionLoad, cpuMsPerRequest: questionLoadCpuMs } = await loadWithCpu(pid, url, lists.questions);
    const { rss: rssAfterLoad, peak: peakRss } = await memoryOf(pid);
    child.kill('SIGTERM');
    const { code, signal } = await exitOf(child);
    return { listeningSeconds, firstSearchSeconds, readySeconds, rssAfterFirstSearch, rssAfterLoad, peakRss, queries, questions, load, loadCpuMs, questionLoad, questionLoadCpuMs, exit: signal ?? String(code) };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exitOf(child);
    }
  }
}

function requestsPerSecond(load: autocannon.Result): number {
  return load.latency.totalCount / load.duration;
}

function sectionTitle(scale: number): string {
  return `## Scale: argo-cd docs ×${scale} against ×1`;
}

/** A row of the main table: the value at each scale, how to print it, and the target if the issue sets one. */
interface Measure {
  name: string;
  one: number;
  many: number;
  format: (value: number) => string;
  target?: string;
  /** Whether the value meets the target at a scale (×1 when `many` is false). */
  meets?: (value: number, many: boolean) => boolean;
  /** Whether the ×N / ×1 ratio meets the target (targets on the ratio). */
  ratioMeets?: (ratio: number) => boolean;
}

/** A number with `digits` decimals and thousands separators; a value that rounds to zero prints without a minus sign. */
const fixed = (digits: number) => (value: number) => {
  if (!Number.isFinite(value)) return 'n/a';
  const text = value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return /^-[0.]+$/.test(text) ? text.slice(1) : text;
};
const percent = (value: number) => (Number.isFinite(value) ? `${(value * 100).toFixed(2)} %` : 'n/a');

function measures(one: ScaleRun, many: ScaleRun): Measure[] {
  const both = (read: (run: ScaleRun) => number) => ({ one: read(one), many: read(many) });
  const n = `×${many.copies}`;
  return [
    { name: 'files', ...both((run) => run.first.files), format: fixed(0) },
    { name: 'chunks', ...both((run) => run.first.chunks), format: fixed(0) },
    { name: 'first ingest, whole process (s)', ...both((run) => run.first.wallSeconds), format: fixed(2) },
    { name: 'first ingest, sync as logged (s)', ...both((run) => run.first.syncSeconds), format: fixed(2) },
    { name: 'first ingest, chunks/s (whole process)', ...both((run) => run.first.chunks / run.first.wallSeconds), format: fixed(0), target: `≥ 1,500 (${n})`, meets: (value, isMany) => !isMany || value >= 1500 },
    { name: 'first ingest, chunks/s (sync)', ...both((run) => run.first.chunks / run.first.syncSeconds), format: fixed(0) },
    { name: 'first ingest, peak RSS (MiB)', ...both((run) => run.first.peakRssMiB), format: fixed(0), target: `≤ 800 (${n})`, meets: (value, isMany) => !isMany || value <= 800 },
    { name: 'data folder on disk after the first ingest (MiB)', ...both((run) => run.dataDirMiB), format: fixed(1) },
    { name: 'unchanged re-run, whole process (s)', ...both((run) => run.rerun.wallSeconds), format: fixed(2) },
    { name: 'unchanged re-run, sync as logged (s)', ...both((run) => run.rerun.syncSeconds), format: fixed(3) },
    { name: 're-run / first, whole process', ...both((run) => run.rerun.wallSeconds / run.first.wallSeconds), format: percent, target: `≤ 3 % (${n})`, meets: (value, isMany) => !isMany || value <= 0.03 },
    { name: 're-run / first, sync', ...both((run) => run.rerun.syncSeconds / run.first.syncSeconds), format: percent },
    { name: 'unchanged re-run, peak RSS (MiB)', ...both((run) => run.rerun.peakRssMiB), format: fixed(0), target: `≤ 400 (${n})`, meets: (value, isMany) => !isMany || value <= 400 },
    { name: 'server: spawn to "listening on" (s)', ...both((run) => run.server.listeningSeconds), format: fixed(2) },
    { name: 'server start: spawn to first POST /search 200 (s)', ...both((run) => run.server.firstSearchSeconds), format: fixed(2), target: `≤ 5 (${n})`, meets: (value, isMany) => !isMany || value <= 5 },
    { name: 'server: spawn to GET /readyz 200 (s)', ...both((run) => run.server.readySeconds), format: fixed(2) },
    {
      name: 'server RSS right after the first /search 200 (MiB)',
      ...both((run) => run.server.rssAfterFirstSearch),
      format: fixed(0),
      target: `≤ 250 (×1), ≤ 500 (${n})`,
      meets: (value, isMany) => value <= (isMany ? 500 : 250),
    },
    {
      name: 'server RSS after the load tests (MiB)',
      ...both((run) => run.server.rssAfterLoad),
      format: fixed(0),
      target: `≤ 250 (×1), ≤ 500 (${n})`,
      meets: (value, isMany) => value <= (isMany ? 500 : 250),
    },
    { name: 'server peak RSS, VmHWM at the end (MiB)', ...both((run) => run.server.peakRss), format: fixed(0) },
    { name: '/search p50, 1 connection (ms)', ...both((run) => run.server.queries.p50), format: fixed(2), target: `${n} ≤ 2.5 × ×1`, ratioMeets: (ratio) => ratio <= 2.5 },
    { name: '/search p95, 1 connection (ms)', ...both((run) => run.server.queries.p95), format: fixed(2) },
    { name: '/search mean, 1 connection (ms)', ...both((run) => run.server.queries.mean), format: fixed(2) },
    { name: '/search req/s, 1 connection', ...both((run) => run.server.queries.perSecond), format: fixed(0) },
    { name: '/search p50, questions, 1 connection (ms)', ...both((run) => run.server.questions.p50), format: fixed(2) },
    { name: '/search req/s, 10 connections, phrases', ...both((run) => requestsPerSecond(run.server.load)), format: fixed(0), target: `${n} ≥ 0.5 × ×1`, ratioMeets: (ratio) => ratio >= 0.5 },
    { name: '/search p50, 10 connections, phrases (ms)', ...both((run) => run.server.load.latency.p50), format: fixed(0) },
    { name: 'server CPU per request, 10 connections, phrases (ms)', ...both((run) => run.server.loadCpuMs), format: fixed(2) },
    { name: '/search req/s, 10 connections, questions', ...both((run) => requestsPerSecond(run.server.questionLoad)), format: fixed(0), target: `${n} ≥ 0.5 × ×1`, ratioMeets: (ratio) => ratio >= 0.5 },
    { name: '/search p50, 10 connections, questions (ms)', ...both((run) => run.server.questionLoad.latency.p50), format: fixed(0), target: `${n} ≤ 1.5 × ×1`, ratioMeets: (ratio) => ratio <= 1.5 },
    { name: 'server CPU per request, 10 connections, questions (ms)', ...both((run) => run.server.questionLoadCpuMs), format: fixed(2) },
    { name: '/search p99, 10 connections (ms)', ...both((run) => run.server.load.latency.p99), format: fixed(0) },
    { name: '/search errors, 10 connections', ...both((run) => run.server.load.errors), format: fixed(0) },
    { name: '/search non-2xx, 10 connections', ...both((run) => run.server.load.non2xx), format: fixed(0) },
  ];
}

/** yes, or no with the scales that miss; computed from the numbers. */
function metOf(measure: Measure, n: string): string {
  const ratio = measure.many / measure.one;
  if (measure.ratioMeets) return measure.ratioMeets(ratio) ? 'yes' : 'no';
  if (!measure.meets) return '';
  const misses = [measure.meets(measure.one, false) ? undefined : '×1', measure.meets(measure.many, true) ? undefined : n].filter(Boolean);
  return misses.length === 0 ? 'yes' : `no (${misses.join(', ')})`;
}

function tableRow(measure: Measure, n: string): string {
  const ratio = measure.many / measure.one;
  return `| ${measure.name} | ${measure.format(measure.one)} | ${measure.format(measure.many)} | ${Number.isFinite(ratio) ? ratio.toFixed(2) : 'n/a'} | ${measure.target ?? ''} | ${metOf(measure, n)} |`;
}

/** value = a + b × chunks through the two measured points, evaluated at PROJECTED_CHUNKS. */
function projectionRow(name: string, one: ScaleRun, many: ScaleRun, read: (run: ScaleRun) => number, format: (value: number) => string): string {
  const [x1, x2] = [one.first.chunks, many.first.chunks];
  const [y1, y2] = [read(one), read(many)];
  const b = (y2 - y1) / (x2 - x1);
  const a = y1 - b * x1;
  return `| ${name} | ${format(y1)} | ${format(y2)} | ${format(a)} | ${(b * 1000).toPrecision(3)} | ${format(a + b * PROJECTED_CHUNKS)} |`;
}

function report(one: ScaleRun, many: ScaleRun, lists: QueryLists): string {
  const n = `×${many.copies}`;
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const command = ['pnpm exec tsx bench/scale-argo-cd.ts', ...process.argv.slice(2)].join(' ');
  const rows = measures(one, many).map((measure) => tableRow(measure, n));
  const projections = [
    projectionRow('first ingest, whole process (s)', one, many, (run) => run.first.wallSeconds, fixed(1)),
    projectionRow('unchanged re-run, whole process (s)', one, many, (run) => run.rerun.wallSeconds, fixed(2)),
    projectionRow('first ingest, peak RSS (MiB)', one, many, (run) => run.first.peakRssMiB, fixed(0)),
    projectionRow('server RSS right after the first /search 200 (MiB)', one, many, (run) => run.server.rssAfterFirstSearch, fixed(0)),
    projectionRow('server RSS after the load tests (MiB)', one, many, (run) => run.server.rssAfterLoad, fixed(0)),
    projectionRow('server start: spawn to first /search 200 (s)', one, many, (run) => run.server.firstSearchSeconds, fixed(2)),
    projectionRow('data folder on disk (MiB)', one, many, (run) => run.dataDirMiB, fixed(1)),
  ];
  const failures = [one, many].reduce((total, run) => total + run.server.load.errors + run.server.load.non2xx + run.server.questionLoad.errors + run.server.questionLoad.non2xx, 0);
  return `${sectionTitle(many.copies)}

\`${command}\`, ${new Date().toISOString().slice(0, 10)}, on ${cpus().length} CPU cores (${cpu}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB of memory, Node ${process.version}.

What ran: the compiled bundles (\`node ${INGEST_BUNDLE} <folder>\` and \`node ${SERVER_BUNDLE}\` from the repository root, ${process.argv.includes('--no-build') ? 'dist/ as found (`--no-build`)' : 'built by `scripts/build.ts` at the start'}), each in its own process with a fresh RAG_DATA_DIR per scale, the embedded default (LanceDB, BM25 only: no EMBED_MODEL, EMBED_URL, QDRANT_URL, GCS_BUCKET or DOCLING_URL), defaults otherwise (CHUNK_SIZE 1200, CHUNK_OVERLAP 200, INGEST_CONCURRENCY 4), LOG_LEVEL=info, LOG_FORMAT=json. ×1 is \`../shared/corpora/argo-cd-docs\` copied into a temporary folder; ${n} is that folder copied ${many.copies} times into sibling folders \`copy-01\` … \`copy-${String(many.copies).padStart(2, '0')}\`, so every document is distinct.

Per scale: the first ingest into the empty data folder, then the same command again with nothing changed (it wrote \`0 upserts\` at both scales). "Whole process" is the wall time from spawn to exit (start-up and compaction included); "sync as logged" is the job's \`ingest finished\` seconds. Peak RSS of the ingest is ${existsSync(GNU_TIME) ? "GNU time's maximum resident set size" : `VmHWM from /proc, polled every ${POLL_MS} ms`}. The server is then started with PORT=0; start is from spawn until the first POST /search answers 200 (polled every ${POLL_MS} ms once it listens). RSS (VmRSS) and VmHWM come from /proc. One connection: sequential \`fetch\` POST /search \`{"query": …}\` (the default k = ${TOP_K}) from the benchmark process, one warm-up pass then ${ROUNDS} measured passes over ${lists.queries.length} corpus-derived queries (bench/argo-cd-queries.ts \`buildQueries\`, the same list at both scales) and over ${lists.questions.length} natural-language questions (the golden sets' questions and bench/argo-cd-queries.ts \`ARGO_CD_QUESTIONS\`, 10–25 words). Ten connections: autocannon in a child process, ${HTTP_CONNECTIONS} connections, no pipelining, ${HTTP_SECONDS} s, once cycling through the corpus-derived phrases and once through the questions: the rows say which load gave which figure. The server's CPU per request under a load is its user + system time (/proc/PID/stat) over that load divided by the requests it answered.

| measure | ×1 | ${n} | ${n}/×1 | target | met? |
| --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

${failures === 0 ? 'Every request under load answered 2xx.' : `Under load ${failures} requests failed or answered non-2xx: the 10-connection figures are not comparable.`} The server exited ${one.server.exit} (×1) and ${many.server.exit} (${n}) on SIGTERM.

**Projection to ${PROJECTED_CHUNKS.toLocaleString('en')} chunks** (not measured): value = a + b × chunks, the straight line through the two measured points (${one.first.chunks.toLocaleString('en')} and ${many.first.chunks.toLocaleString('en')} chunks); b is per 1,000 chunks.

| measure | ×1 | ${n} | a | b (per 1,000 chunks) | projected at ${PROJECTED_CHUNKS.toLocaleString('en')} chunks |
| --- | --- | --- | --- | --- | --- |
${projections.join('\n')}
`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
