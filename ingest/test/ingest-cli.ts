import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  lastLine: string;
}

/**
 * `pnpm ingest ARGS` as a user runs it, on the embedded default (LanceDB in `dataDir`, no services): every
 * setting that would point it elsewhere or shard it is cleared, whatever the caller's environment holds.
 */
export function runIngestCli(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('pnpm', ['exec', 'tsx', 'ingest/src/cli.ts', ...args], {
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
