/**
 * One run of the compiled ingest job (`node dist/ingest/cli.js <folder>`) in its own process, on the embedded
 * default with a given data folder, as benchmarks measure it: its summary line, wall time, the job's own sync
 * time (its `ingest finished` log line) and peak RSS (GNU time's maximum resident set size; worker threads
 * share the process's memory, so it counts them).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { inCgroup, type MemoryCgroup } from '../ingest/test/memory-cgroup.ts';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
export const INGEST_BUNDLE = 'dist/ingest/cli.js';
const GNU_TIME = '/usr/bin/time';

export interface IngestProcessRun {
  summary: string;
  files: number;
  chunks: number;
  errors: number;
  wallSeconds: number;
  syncSeconds: number;
  peakRssMiB: number;
  /** Lines the job printed before its summary line (link lists, shards). */
  notes: string[];
  stderr: string;
}

/** The environment of a run on the embedded default: nothing points it at a service, whatever the caller's holds. */
export function embeddedEnv(dataDir: string, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    RAG_DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    LANCEDB_LOG: 'error',
    // As the images (Dockerfile) and `pnpm ingest` set it: two glibc malloc arenas.
    MALLOC_ARENA_MAX: '2',
    ...env,
  };
}

/** `cgroup`: the run enters that memory cgroup first (ingest/test/memory-cgroup.ts). */
export async function runIngestProcess(folder: string, dataDir: string, options: { env?: Record<string, string>; cwd?: string; cgroup?: Pick<MemoryCgroup, 'procsFile'> } = {}): Promise<IngestProcessRun> {
  const node = [process.execPath, INGEST_BUNDLE, folder];
  const timed = existsSync(GNU_TIME);
  const [program, ...programArgs] = timed ? [GNU_TIME, '-v', ...node] : node;
  const [command, args] = options.cgroup ? inCgroup(options.cgroup, program!, programArgs) : [program!, programArgs];
  const started = performance.now();
  const child = spawn(command, args, { cwd: options.cwd ?? repositoryRoot, env: embeddedEnv(dataDir, options.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (part: Buffer) => (stdout += part.toString()));
  child.stderr.on('data', (part: Buffer) => (stderr += part.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const wallSeconds = (performance.now() - started) / 1000;
  const lines = stdout.trimEnd().split('\n');
  const summary = lines.at(-1) ?? '';
  const count = (label: string) => Number(new RegExp(`(\\d+) ${label}`).exec(summary)?.[1] ?? NaN);
  if (!summary.startsWith('done:') || (code !== 0 && code !== 1)) throw new Error(`ingest of ${folder} exited ${code}: ${summary}\n${stderr.slice(-3000)}`);
  return {
    summary,
    files: count('files'),
    chunks: count('chunks'),
    errors: count('errors'),
    wallSeconds,
    syncSeconds: syncSecondsOf(stderr),
    peakRssMiB: timed ? peakRssOf(stderr) : Number.NaN,
    notes: lines.slice(0, -1).filter((line) => !line.startsWith('{')),
    stderr,
  };
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
