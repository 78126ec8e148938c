/**
 * Ingests ../shared/corpora/argo-cd-docs (455 Markdown files) twice into a fresh data folder, as
 * `pnpm ingest` does, and reports files, chunks, the first and the unchanged re-run's time, their
 * ratio and the peak RSS. `--write` replaces the "Ingestion: argo-cd docs" section of bench/results.md.
 *
 *   pnpm exec tsx bench/ingest-argo-cd.ts [--write]
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeResultsSection } from './results-file.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
const corpus = join(repositoryRoot, '../shared/corpora/argo-cd-docs');
const SECTION = '## Ingestion: argo-cd docs';
const GNU_TIME = '/usr/bin/time';
const MODEL2VEC = 'packages/core/test/fixtures/models/model2vec-test-bge-base-vq';

interface RunResult {
  summary: string;
  wallSeconds: number;
  syncSeconds: number;
  peakRssMiB: number | undefined;
}

interface Configuration {
  name: string;
  env: Record<string, string>;
}

const configurations: Configuration[] = [
  { name: 'embedded default (LanceDB, BM25 only: no EMBED_MODEL)', env: {} },
  { name: `LanceDB + Model2Vec dense (\`EMBED_MODEL=${MODEL2VEC}\`)`, env: { EMBED_MODEL: MODEL2VEC } },
];

async function main(): Promise<void> {
  if (!existsSync(corpus)) {
    console.log(`skipped: ${corpus} is absent (it comes with ../shared/corpora)`);
    return;
  }
  const rows: string[] = [];
  for (const configuration of configurations) {
    const dataDir = await mkdtemp(join(tmpdir(), 'rag-bench-ingest-'));
    try {
      const first = await ingestOnce(dataDir, configuration.env);
      const rerun = await ingestOnce(dataDir, configuration.env);
      rows.push(row(configuration.name, first, rerun));
      console.error(`${configuration.name}\n  first: ${first.summary}\n  rerun: ${rerun.summary}`);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const section = report(rows);
  console.log(section);
  if (process.argv.includes('--write')) await writeResultsSection(SECTION, section);
}

/** One `pnpm ingest <corpus>` in its own process, so that its peak RSS is its own. */
function ingestOnce(dataDir: string, env: Record<string, string>): Promise<RunResult> {
  const node = [process.execPath, '--import', 'tsx', 'ingest/src/cli.ts', corpus];
  const timed = existsSync(GNU_TIME);
  const [command, ...args] = timed ? [GNU_TIME, '-v', ...node] : node;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command!, args, {
      cwd: repositoryRoot,
      env: { ...process.env, RAG_DATA_DIR: dataDir, LOG_LEVEL: 'info', QDRANT_URL: '', EMBED_URL: '', EMBED_MODEL: '', DOCLING_URL: '', GCS_BUCKET: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (part: Buffer) => (stdout += part.toString()));
    child.stderr.on('data', (part: Buffer) => (stderr += part.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallSeconds = (performance.now() - started) / 1000;
      const summary = stdout.trimEnd().split('\n').at(-1) ?? '';
      if (code !== 0 || !summary.startsWith('done:')) return reject(new Error(`ingest exited ${code}:\n${stderr.slice(-2000)}`));
      resolve({ summary, wallSeconds, syncSeconds: syncSecondsOf(stderr), peakRssMiB: timed ? peakRssOf(stderr) : undefined });
    });
  });
}

/** The job's own measure of the sync, from its `ingest finished` log line: process start-up excluded. */
function syncSecondsOf(log: string): number {
  for (const line of log.split('\n')) {
    if (!line.includes('"ingest finished"')) continue;
    return (JSON.parse(line) as { seconds: number }).seconds;
  }
  return Number.NaN;
}

function peakRssOf(timeOutput: string): number | undefined {
  const kilobytes = /Maximum resident set size \(kbytes\): (\d+)/.exec(timeOutput)?.[1];
  return kilobytes ? Number(kilobytes) / 1024 : undefined;
}

function row(name: string, first: RunResult, rerun: RunResult): string {
  const count = (label: string) => new RegExp(`(\\d+) ${label}`).exec(first.summary)?.[1] ?? '?';
  const rss = (result: RunResult) => (result.peakRssMiB === undefined ? 'n/a' : `${result.peakRssMiB.toFixed(0)}`);
  return `| ${name} | ${count('files')} | ${count('chunks')} | ${first.syncSeconds.toFixed(2)} s (${first.wallSeconds.toFixed(1)} s) | ${rerun.syncSeconds.toFixed(2)} s (${rerun.wallSeconds.toFixed(1)} s) | ${(rerun.syncSeconds / first.syncSeconds).toFixed(3)} | ${rss(first)} / ${rss(rerun)} |`;
}

function report(rows: string[]): string {
  return `${SECTION}

\`pnpm exec tsx bench/ingest-argo-cd.ts --write\`: \`pnpm ingest ../shared/corpora/argo-cd-docs\` (455 Markdown files, 3.0 MB) into an empty data folder, then again with nothing changed. Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} CPU cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}, defaults otherwise (CHUNK_SIZE 1200, CHUNK_OVERLAP 200, INGEST_CONCURRENCY 4, EMBED_BATCH_SIZE 32).

Times are the sync itself as the job logs it (\`ingest finished\`), with the whole process, start-up included, in brackets. The ratio is re-run / first run of the sync time. Peak RSS is GNU time's maximum resident set size of the process, first run / re-run.

| configuration | files | chunks | first run | unchanged re-run | ratio | peak RSS (MiB) |
| --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

The re-run reads each file's modification time and size from the folder and the stored versions from the index, and nothing else: no file is read, converted, chunked or embedded, and nothing is written (\`0 upserts\`). The Model2Vec row embeds every chunk with the test model shipped in the repository (\`packages/core/test/fixtures/models/\`): it shows what a dense embedder adds to the first run and that the re-run does not pay it, not retrieval quality. A transformer (ONNX or TEI) embedder costs more per chunk, which only makes the ratio smaller.
`;
}


main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
