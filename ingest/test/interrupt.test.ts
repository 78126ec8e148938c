/**
 * SIGTERM to the ingest job in the middle of a run, as Kubernetes sends it when it stops the CronJob's
 * pod: the real CLI as a child process, a TEI embedder slow enough that the signal lands mid-run.
 */
import { spawn } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LanceDbStore } from '@rag/core/embedded';
import { closeFakeServers, startFakeServer, within, type RecordedRequest } from '../../packages/core/test/adapters/fake-server.ts';
import { guide } from '../../packages/core/test/ingest/fixture-folder.ts';
import { FAKE_EMBED_DIMENSION, teiEmbed } from '../../services/retrieval/test/fakes/fake-tei.ts';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const DOCUMENTS = Array.from({ length: 40 }, (_, index) => `guide-${String(index).padStart(2, '0')}.md`);

let folder: string;
const dataDirs: string[] = [];

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-interrupt-corpus-'));
});

afterEach(async () => {
  await closeFakeServers();
  for (const dir of [folder, ...dataDirs.splice(0)]) await rm(dir, { recursive: true, force: true });
});

/** TEI that takes `delayMs` over each embedding call: what makes the run last long enough to be stopped. */
async function slowTei() {
  const tei = {
    delayMs: 0,
    embedCalls: 0,
    url: '',
  };
  const server = await startFakeServer(async (request: RecordedRequest, response: ServerResponse) => {
    if (request.path === '/v1/embeddings') {
      tei.embedCalls += 1;
      await new Promise((resolve) => setTimeout(resolve, tei.delayMs));
    }
    teiEmbed(request, response);
  });
  tei.url = server.url;
  return tei;
}

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  lastLine: string;
}

/** `node dist`-style: the CLI under plain node, so that the signal reaches it (pnpm would stand in between). */
function ingestCli(args: string[], env: Record<string, string>, whenRunning?: (signal: (name: NodeJS.Signals) => void) => Promise<void>): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'ingest/src/cli.ts', ...args], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', LANCEDB_LOG: 'error', INGEST_CONCURRENCY: '2', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (part: Buffer) => (stdout += part.toString()));
  child.stderr.on('data', (part: Buffer) => (stderr += part.toString()));
  void whenRunning?.((name) => child.kill(name));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, lastLine: stdout.trimEnd().split('\n').at(-1) ?? '' }));
  });
}

/** Every document in the index with its content hash and chunk ids, and the number of points. */
async function indexOf(dataDir: string) {
  const store = new LanceDbStore({ dataDir, collection: 'docs-v2' });
  try {
    await store.open({ model: 'my-model', dimension: FAKE_EMBED_DIMENSION });
    const documents = (await store.listDocuments()).sort((a, b) => a.source.localeCompare(b.source));
    return {
      points: await store.count(),
      documents: new Map(documents.map((document) => [document.source, { contentHash: document.contentHash, chunkIds: [...document.chunkIds].sort() }])),
    };
  } finally {
    await store.close();
  }
}

async function newDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rag-interrupt-data-'));
  dataDirs.push(dir);
  return dir;
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

it('stops on SIGTERM with the done line, RAG_INGEST_INTERRUPTED and exit 3, deletes nothing, and the next run completes the index', async () => {
  const tei = await slowTei();
  const dataDir = await newDataDir();
  const env = { RAG_DATA_DIR: dataDir, EMBED_URL: tei.url, EMBED_MODEL: 'my-model', EMBED_BATCH_SIZE: '2' };
  // A document indexed by an earlier run and since deleted from the folder: only a complete run may prune it.
  await writeFile(join(folder, 'retired.md'), guide(2, 'retired'));
  expect((await ingestCli([folder], env)).code).toBe(0);
  await rm(join(folder, 'retired.md'));
  for (const name of DOCUMENTS) await writeFile(join(folder, name), guide(3, name));

  tei.delayMs = 100;
  const callsBefore = tei.embedCalls;
  const stopped = await ingestCli([folder], env, async (signal) => {
    await within(waitFor(() => tei.embedCalls >= callsBefore + 8), 30_000);
    signal('SIGTERM');
  });

  expect(stopped.code, stopped.stderr).toBe(3);
  // What it did: the chunks it wrote, nothing deleted, nothing failed.
  expect(stopped.lastLine).toMatch(/^done: \d+ files, (\d+) chunks, \1 upserts, 0 deletes, 0 skipped, 0 errors$/);
  const [, files, upserts] = /^done: (\d+) files, \d+ chunks, (\d+) upserts/.exec(stopped.lastLine)!.map(Number);
  expect(upserts).toBeGreaterThan(0);
  expect(stopped.stderr).toMatch(new RegExp(`^RAG_INGEST_INTERRUPTED: The ingest run was stopped .*\\(stopped by SIGTERM; \\d+ of the ${files} documents listed so far not synced, left for the next run\\.\\)$`, 'm'));
  const afterStop = await indexOf(dataDir);
  expect(afterStop.documents.has('retired.md'), 'a run stopped before the end of its listing must not prune').toBe(true);
  const written = DOCUMENTS.filter((name) => afterStop.documents.has(name));
  expect(written.length).toBeGreaterThan(0);
  expect(written.length).toBeLessThan(DOCUMENTS.length);

  tei.delayMs = 0;
  const rerun = await ingestCli([folder], env);

  expect(rerun.code, rerun.stderr).toBe(0);
  expect(rerun.lastLine).toMatch(new RegExp(`^done: ${DOCUMENTS.length} files, \\d+ chunks, \\d+ upserts, \\d+ deletes, ${written.length} skipped, 0 errors$`));
  const healed = await indexOf(dataDir);
  const freshDir = await newDataDir();
  expect((await ingestCli([folder], { ...env, RAG_DATA_DIR: freshDir })).code).toBe(0);
  const fresh = await indexOf(freshDir);
  expect(healed.documents).toEqual(fresh.documents);
  expect(healed.points, 'every chunk once, no stray point').toBe([...fresh.documents.values()].reduce((sum, document) => sum + document.chunkIds.length, 0));
});

it('exits at once, with 128 + 15, on a second SIGTERM', async () => {
  const tei = await slowTei();
  const dataDir = await newDataDir();
  for (const name of DOCUMENTS.slice(0, 4)) await writeFile(join(folder, name), guide(3, name));
  tei.delayMs = 60_000; // an embedder that does not answer: only the second signal ends the run

  const run = await ingestCli([folder], { RAG_DATA_DIR: dataDir, EMBED_URL: tei.url, EMBED_MODEL: 'my-model' }, async (signal) => {
    await within(waitFor(() => tei.embedCalls >= 1), 30_000);
    signal('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 200));
    signal('SIGTERM');
  });

  expect(run.code, run.stderr).toBe(128 + 15);
  expect(run.stderr).toContain('SIGTERM again: exiting now');
});
