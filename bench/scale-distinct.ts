/**
 * The embedded default (LanceDB, BM25 only) on distinct chunks at two sizes: the PostgreSQL manual alone and
 * the four Debian HTML manuals together (PostgreSQL, Python, Django, kernel: bench/debian-manuals.ts), where
 * the near-duplicate groups have nothing to merge. Each index is built by the compiled job (`pnpm build`
 * first unless `--no-build`, then `node dist/ingest/cli.js <folder>`) into its own data folder, then served by
 * `node dist/retrieval/server.js` and driven with the natural-language PostgreSQL questions of
 * bench/queries/postgresql-questions.txt: start to the first POST /search 200, p50 on one connection (one
 * warm-up pass, then ROUNDS passes), req/s under autocannon at 10 connections, the server's CPU per
 * question over that load (utime + stime of /proc/PID/stat, proc(5)), and its RSS after the load.
 *
 *   pnpm exec tsx bench/scale-distinct.ts [--write] [--no-build] [--data DIR] [--server BUNDLE] [--json FILE] [--before FILE] [--label TEXT] [--long] [--ingest-env NAME=VALUE ...]
 *   pnpm exec tsx bench/scale-distinct.ts --report FILE [--report FILE ...] [--write] [--long]
 *
 * `--data DIR` keeps the data folders there and reuses an index already built (the job is then not run);
 * `--report FILE` (repeatable) measures nothing and prints (and with `--write` writes) the section of runs saved with `--json`;
 * `--server BUNDLE` serves with another build of the server (an older dist/ copied beside it, to compare
 * two builds on the same machine load); `--json FILE` saves this run's figures; `--before FILE` puts an earlier run's figures beside them.
 * `--long` drives the servers with the same questions as people type them into a chat (about 24 words against 11:
 * bench/queries/postgresql-long-questions.txt) and writes its own section. `--ingest-env CHUNK_MIN_CHARS=0` builds the
 * indexes with a setting other than the default (here: the seed's chunk boundaries, to compare with the default's).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { debianManual, HTML_MANUALS } from './debian-manuals.ts';
import { embeddedEnv, runIngestProcess } from './ingest-process.ts';
import { writeResultsSection } from './results-file.ts';
import { exitOf, listeningUrl, postSearch, search, untilOk } from './server-process.ts';
import { HTTP_CONNECTIONS, HTTP_SECONDS, measure, ROUNDS, runAutocannon } from './search-load.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const SERVER_BUNDLE = 'dist/retrieval/server.js';

/** The questions a run drives the servers with, and the section of bench/results.md it writes. */
interface QuestionSet {
  file: string;
  title: string;
  what: string;
}

const SHORT_QUESTIONS: QuestionSet = {
  file: 'bench/queries/postgresql-questions.txt',
  title: '## Scale: distinct chunks, the PostgreSQL manual against four Debian manuals (issue 30)',
  what: 'natural-language questions about PostgreSQL',
};
const LONG_QUESTIONS: QuestionSet = {
  file: 'bench/queries/postgresql-long-questions.txt',
  title: '## Scale: distinct chunks, long questions as typed into a chat (issue 40)',
  what: 'questions about PostgreSQL as people type them into a chat (the same topics as bench/queries/postgresql-questions.txt, about twice as many words)',
};
/** USER_HZ, the unit of /proc/PID/stat's utime and stime (`getconf CLK_TCK`). */
const CLOCK_TICKS_PER_SECOND = 100;

const SIZES = [
  { name: 'postgresql', manuals: ['postgresql'] },
  { name: 'four-manuals', manuals: HTML_MANUALS },
] as const;

export interface SizeRun {
  name: string;
  chunks: number;
  firstAnswerSeconds: number;
  p50Ms: number;
  p95Ms: number;
  requestsPerSecond: number;
  cpuMsPerQuestion: number;
  rssAfterLoadMiB: number;
}

export interface DistinctRun {
  label: string;
  measuredAt: string;
  loadAverage: number;
  sizes: SizeRun[];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      write: { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
      data: { type: 'string' },
      json: { type: 'string' },
      before: { type: 'string' },
      label: { type: 'string', default: 'this run' },
      server: { type: 'string', default: SERVER_BUNDLE },
      report: { type: 'string', multiple: true },
      long: { type: 'boolean', default: false },
      'ingest-env': { type: 'string', multiple: true },
    },
  });
  const questionSet = values.long ? LONG_QUESTIONS : SHORT_QUESTIONS;
  const questions = await readQuestions(questionSet);
  if (values.report) {
    const runs = await Promise.all(values.report.map(async (file) => JSON.parse(await readFile(file, 'utf8')) as DistinctRun));
    const section = sectionOf(runs, questionSet, questions);
    process.stdout.write(section);
    if (values.write) await writeResultsSection(questionSet.title, section);
    return;
  }
  const ingestEnv = Object.fromEntries((values['ingest-env'] ?? []).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  if (!values['no-build']) await build();
  const root = values.data ?? (await mkdtemp(join(tmpdir(), 'scale-distinct-')));
  try {
    const sizes: SizeRun[] = [];
    for (const size of SIZES) {
      const { dataDir, chunks } = await indexOf(root, size.name, size.manuals, ingestEnv);
      const server = await measureServer(values.server, dataDir, questions);
      console.error(`${size.name} (${chunks} chunks): first answer ${server.firstAnswerSeconds.toFixed(2)} s, p50 ${server.p50Ms.toFixed(2)} ms, ${server.requestsPerSecond.toFixed(0)} req/s, ${server.cpuMsPerQuestion.toFixed(2)} ms CPU/question, RSS ${server.rssAfterLoadMiB.toFixed(0)} MiB`);
      sizes.push({ name: size.name, chunks, ...server });
    }
    const run: DistinctRun = { label: values.label, measuredAt: new Date().toISOString(), loadAverage: loadavg()[0]!, sizes };
    if (values.json) await writeFile(values.json, `${JSON.stringify(run, null, 2)}\n`);
    const before = values.before ? (JSON.parse(await readFile(values.before, 'utf8')) as DistinctRun) : undefined;
    const section = sectionOf(before ? [before, run] : [run], questionSet, questions);
    process.stdout.write(section);
    if (values.write) await writeResultsSection(questionSet.title, section);
  } finally {
    if (!values.data) await rm(root, { recursive: true, force: true });
  }
}

async function readQuestions(questionSet: QuestionSet): Promise<string[]> {
  const lines = (await readFile(join(repositoryRoot, questionSet.file), 'utf8')).split('\n').map((line) => line.trim());
  return lines.filter((line) => line !== '' && !line.startsWith('#'));
}

function build(): Promise<void> {
  console.error('building dist/ (scripts/build.ts)');
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: repositoryRoot, stdio: ['ignore', 2, 2] });
  return exitOf(child).then(({ code }) => {
    if (code !== 0) throw new Error(`scripts/build.ts exited ${code}`);
  });
}

/**
 * The data folder of one size, built by the compiled job from the manuals hard-linked into one folder (the
 * unpacked manuals are only read); an index already in `root` (`--data`) is reused, its chunk count remembered.
 */
async function indexOf(root: string, name: string, manuals: readonly string[], env: Record<string, string>): Promise<{ dataDir: string; chunks: number }> {
  const folder = join(root, name);
  const dataDir = join(folder, 'data');
  const countFile = join(folder, 'chunks');
  if (existsSync(countFile)) return { dataDir, chunks: Number(await readFile(countFile, 'utf8')) };
  const corpus = join(folder, 'corpus');
  await rm(folder, { recursive: true, force: true });
  await mkdir(dataDir, { recursive: true });
  for (const manual of manuals) await hardLinkTree(await debianManual(manual), join(corpus, manual));
  const run = await runIngestProcess(corpus, dataDir, { env });
  console.error(`${name}: ${run.summary} (${run.wallSeconds.toFixed(0)} s, peak ${run.peakRssMiB.toFixed(0)} MiB)`);
  await writeFile(countFile, String(run.chunks));
  return { dataDir, chunks: run.chunks };
}

/** `cp -al`: the manual's files linked, not copied, so the ingest reads them where they are. */
async function hardLinkTree(source: string, target: string): Promise<void> {
  await mkdir(join(target, '..'), { recursive: true });
  const child = spawn('cp', ['-al', source, target], { stdio: ['ignore', 'ignore', 'inherit'] });
  if ((await exitOf(child)).code !== 0) await cp(source, target, { recursive: true });
}

async function measureServer(bundle: string, dataDir: string, questions: string[]): Promise<Omit<SizeRun, 'name' | 'chunks'>> {
  const started = performance.now();
  const child = spawn(process.execPath, [bundle], { cwd: repositoryRoot, env: embeddedEnv(dataDir, { PORT: '0', RAG_RATE_LIMIT_PER_ADDRESS: '0' }), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderrTail = '';
  child.stderr!.on('data', (part: Buffer) => (stderrTail = (stderrTail + part.toString()).slice(-4000)));
  try {
    const url = await listeningUrl(child, () => stderrTail);
    const firstAnswerSeconds = await untilOk(() => postSearch(url, questions[0]!), started);
    const oneConnection = await measure(questions, (question) => search(url, question), ROUNDS);
    const pid = child.pid!;
    const cpuBefore = await cpuSecondsOf(pid);
    const load = await runAutocannon({ url, queries: questions });
    const cpuSeconds = (await cpuSecondsOf(pid)) - cpuBefore;
    if (load.non2xx > 0 || load.errors > 0) throw new Error(`the load got ${load.non2xx} non-2xx answers and ${load.errors} errors`);
    return {
      firstAnswerSeconds,
      p50Ms: oneConnection.p50,
      p95Ms: oneConnection.p95,
      requestsPerSecond: load.latency.totalCount / load.duration,
      cpuMsPerQuestion: (cpuSeconds * 1000) / load.latency.totalCount,
      rssAfterLoadMiB: await rssMiBOf(pid),
    };
  } finally {
    child.kill('SIGTERM');
    await exitOf(child);
  }
}

/** CPU seconds a process has used, user plus system (/proc/PID/stat fields 14 and 15, proc(5)). */
async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name, which may hold spaces and ends at the last ')': field 3 comes first.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[14 - 3]) + Number(fields[15 - 3])) / CLOCK_TICKS_PER_SECOND;
}

async function rssMiBOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) / 1024;
}

function sectionOf(runs: DistinctRun[], questionSet: QuestionSet, questions: readonly string[]): string {
  const words = questions.reduce((sum, question) => sum + question.split(/\s+/).length, 0) / questions.length;
  const fixed = (digits: number) => (value: number) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const rows: Array<[string, (size: SizeRun) => number, (value: number) => string, string, 'ratio' | 'none']> = [
    ['/search p50, one connection (ms)', (size) => size.p50Ms, fixed(2), 'ratio ≤ 1.5', 'ratio'],
    ['/search req/s, 10 connections', (size) => size.requestsPerSecond, fixed(0), 'ratio ≥ 0.5', 'ratio'],
    ['server CPU per question (ms)', (size) => size.cpuMsPerQuestion, fixed(2), '', 'ratio'],
    ['server RSS after the load (MiB)', (size) => size.rssAfterLoadMiB, fixed(0), '≤ 500 at the larger size', 'none'],
    ['start to first answer (s)', (size) => size.firstAnswerSeconds, fixed(2), '≤ 5', 'none'],
  ];
  const [small, large] = runs[0]!.sizes;
  const lines = [
    questionSet.title,
    '',
    `\`pnpm exec tsx bench/scale-distinct.ts --write\`: ${small!.chunks.toLocaleString('en-US')} chunks (the PostgreSQL 15 manual) against ${large!.chunks.toLocaleString('en-US')} (the PostgreSQL, Python 3.11, Django and kernel 6.1 manuals of Debian bookworm, bench/debian-manuals.ts), each built by the compiled job into its own data folder and served by \`node ${SERVER_BUNDLE}\` (embedded default, BM25 only, MALLOC_ARENA_MAX=2). The load: ${questions.length} ${questionSet.what} (${questionSet.file}, ${words.toFixed(1)} words on average), POST /search with the default k. p50: one connection, one warm-up pass then ${ROUNDS} passes; req/s: autocannon, ${HTTP_CONNECTIONS} connections, ${HTTP_SECONDS} s; CPU per question: the server's utime + stime (/proc/PID/stat) over that load divided by the requests; RSS (VmRSS) after it. ${cpus().length} cores, shared with other engineers' jobs (1-minute load average at the end of each run below), so the figures move by ±15 % from run to run.`,
    '',
  ];
  for (const run of runs) {
    const [one, many] = run.sizes;
    lines.push(`**${run.label}** (${run.measuredAt.slice(0, 16).replace('T', ' ')} UTC, load average ${run.loadAverage.toFixed(1)})`, '');
    lines.push(`| | ${one!.chunks.toLocaleString('en-US')} chunks | ${many!.chunks.toLocaleString('en-US')} chunks | ratio | target |`, '| --- | --- | --- | --- | --- |');
    for (const [name, value, format, target, kind] of rows) {
      const ratio = kind === 'ratio' ? (value(many!) / value(one!)).toFixed(2) : '';
      lines.push(`| ${name} | ${format(value(one!))} | ${format(value(many!))} | ${ratio} | ${target} |`);
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
