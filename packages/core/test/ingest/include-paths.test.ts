import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalDirectorySource } from '../../src/ingestion.ts';
import { startHarness, type Harness } from './ingest-harness.ts';

let folder: string;
let harness: Harness;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-include-paths-'));
  harness = await startHarness();
});

afterEach(async () => {
  await harness.close();
  await rm(folder, { recursive: true, force: true });
});

describe('overlapping include paths', () => {
  it('list a file once', async () => {
    await mkdir(join(folder, 'docs', 'guides'), { recursive: true });
    await writeFile(join(folder, 'README.md'), '# Readme\n');
    await writeFile(join(folder, 'docs', 'api.md'), '# API\n');
    await writeFile(join(folder, 'docs', 'guides', 'setup.md'), '# Setup\n');
    const source = new LocalDirectorySource(folder, { include: ['docs', 'docs/api.md', './docs/guides', 'README.md', 'docs/../README.md'] });

    const listed: string[] = [];
    for await (const document of source.list()) listed.push(document.uri);

    expect(listed).toEqual(['README.md', 'docs/api.md', 'docs/guides/setup.md']);
    const summary = await harness.run(source);
    expect(summary.files).toBe(3);
  });
});
