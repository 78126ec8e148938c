/**
 * The job refuses to start when its memory bound passes the container's limit (cgroup memory.max, a file given
 * here), before it opens the store or reads a document.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig } from '@rag/core';
import { expect, it } from 'vitest';
import { runIngest } from '../src/run-ingest.ts';

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
