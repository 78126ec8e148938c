import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inCgroup, type MemoryCgroup } from './memory-cgroup.ts';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  lastLine: string;
}

/**
 * `pnpm ingest ARGS` as a user runs it, on the embedded default (LanceDB in `dataDir`, no services): every
 * setting that would point it elsewhere or shard it is cleared, whatever the caller's environment holds. With
 * `cgroup`, it runs inside that memory cgroup (memory-cgroup.ts).
 */
export function runIngestCli(dataDir: string, args: string[], env: Record<string, string> = {}, options: { cgroup?: Pick<MemoryCgroup, 'procsFile'> } = {}): Promise<CliRun> {
  const pnpm: [string, string[]] = ['pnpm', ['exec', 'tsx', 'ingest/src/cli.ts', ...args]];
  const [command, commandArgs] = options.cgroup ? inCgroup(options.cgroup, ...pnpm) : pnpm;
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, {
      cwd: repositoryRoot,
      env: { ...process.env, RAG_DATA_DIR: dataDir, LOG_LEVEL: 'warn', QDRANT_URL: '', EMBED_URL: '', EMBED_MODEL: '', DOCLING_URL: '', GCS_BUCKET: '', INGEST_SHARDS: '', JOB_COMPLETION_INDEX: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (part: Buffer) => (stdout += part.toString()));
    child.stderr.on('data', (part: Buffer) => (stderr += part.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, lastLine: stdout.trimEnd().split('\n').at(-1) ?? '' }));
  });
}
