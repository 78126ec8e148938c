import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { pino } from 'pino';
import { LocalDirectorySource } from '../../src/ingestion.ts';
import { guide } from './fixture-folder.ts';
import { startHarness } from './ingest-harness.ts';

it('counts a folder\'s symbolic links as skipped, logging each with its reason, and indexes none of their targets', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'rag-symlinks-'));
  const outside = await mkdtemp(join(tmpdir(), 'rag-symlinks-outside-'));
  const harness = await startHarness();
  try {
    await writeFile(join(folder, 'guide.md'), guide(1));
    await writeFile(join(outside, 'secret.md'), guide(1, 'secret'));
    await symlink(join(outside, 'secret.md'), join(folder, 'secret.md'));
    await mkdir(join(folder, 'docs'));
    await symlink(outside, join(folder, 'docs', 'outside'));
    const logged: Array<{ uri?: string; reason?: string; msg?: string }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });

    const summary = await harness.run(new LocalDirectorySource(folder), { logger });

    expect(summary.toLine()).toMatch(/^done: 1 files, \d+ chunks, \d+ upserts, 0 deletes, 2 skipped, 0 errors$/);
    expect(summary.skippedEntries).toBe(2);
    expect(logged.filter((line) => line.msg === 'skipped').map(({ uri, reason }) => ({ uri, reason }))).toEqual([
      { uri: 'docs/outside', reason: 'symbolic link, not followed' },
      { uri: 'secret.md', reason: 'symbolic link, not followed' },
    ]);
    expect([...(await harness.snapshot()).keys()]).toEqual(['guide.md']);
  } finally {
    await harness.close();
    await rm(folder, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  }
});
