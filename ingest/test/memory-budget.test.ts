/**
 * The job refuses to start when its memory bound passes the container's limit (cgroup memory.max, a file given
 * here), before it opens the store or reads a document.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig } from '@rag/core';
import { afterAll, describe, expect, it } from 'vitest';
import { runIngest } from '../src/run-ingest.ts';
import { runIngestCli } from './ingest-cli.ts';
import { createMemoryCgroup, type MemoryCgroup } from './memory-cgroup.ts';

it("refuses to start past the container's limit, and names the settings; starts when they fit", async () => {
  const folder = mkdtempSync(join(tmpdir(), 'ingest-memory-'));
  const memoryMax = join(folder, 'memory.max');
  writeFileSync(memoryMax, `${2 * 1024 * 1024 * 1024}\n`);
  const docs = join(folder, 'docs');
  mkdirSync(docs);
  writeFileSync(join(docs, 'note.md'), '# Note\n\nA short note about uptime.\n');
  const dataDir = join(folder, 'data');
  const run = (env: Record<string, string>) =>
    runIngest({
      config: loadConfig({ RAG_DATA_DIR: dataDir, INGEST_CONVERT_WORKERS: '2', ...env }),
      logger: createLogger('silent'),
      sourceArgument: docs,
      dryRun: true,
      prune: false,
      cgroupMemoryFiles: [memoryMax],
    });
  await expect(run({})).rejects.toMatchObject({ code: 'RAG_CONFIG_INVALID', message: /= 3328 MiB, past the container's memory limit of 2048 MiB/ });
  expect(existsSync(dataDir)).toBe(false);
  const summary = await run({ INGEST_CONVERT_MEMORY_MB: '448', INGEST_CONVERT_BUFFERS_MB: '192', INGEST_MAIN_MEMORY_MB: '512' });
  expect(summary.files).toBe(1);
}, 60_000);

describe('under a real memory cgroup of 2 GiB', () => {
  const cgroup = createMemoryCgroup('rag-ingest-budget', 2 * 1024 * 1024 * 1024);
  const unavailable = 'unavailable' in cgroup ? cgroup.unavailable : undefined;
  if (unavailable) console.log(`skipped: the real cgroup check needs a memory cgroup: ${unavailable}`);
  afterAll(() => {
    if (!unavailable) (cgroup as MemoryCgroup).remove();
  });

  it.skipIf(unavailable !== undefined)('pnpm ingest finds the limit of the group it runs in (/proc/self/cgroup) and refuses the default settings, exit 2', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'ingest-cgroup-'));
    writeFileSync(join(folder, 'note.md'), '# Note\n\nA short note about uptime.\n');
    const run = await runIngestCli(join(folder, 'data'), [folder], { INGEST_CONVERT_WORKERS: '2', INGEST_CONVERT_MEMORY_MB: '', INGEST_CONVERT_BUFFERS_MB: '', INGEST_MAIN_MEMORY_MB: '' }, { cgroup: cgroup as MemoryCgroup });
    expect(run.code).toBe(2);
    expect(run.stderr + run.stdout).toMatch(/RAG_CONFIG_INVALID.*= 3328 MiB, past the container's memory limit of 2048 MiB \(\/sys\/fs\/cgroup\/[^)]*rag-ingest-budget-/s);
    expect(existsSync(join(folder, 'data'))).toBe(false);
  }, 60_000);
});
