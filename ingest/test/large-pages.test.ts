/**
 * A published page that costs seconds to convert (a table of contents of a whole manual, tens of MB) must not
 * hold the job: it fails alone past INGEST_CONVERT_TIMEOUT_MS, and SIGTERM stops the run while it converts.
 * The real CLI as a child process, its documents converted in worker threads.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { chunkDocument } from '../../packages/core/src/chunking/chunk-markdown.ts';
import { htmlToDocument } from '../../packages/core/src/converters/html.ts';
import { guide } from '../../packages/core/test/ingest/fixture-folder.ts';
import { runIngestCli } from './ingest-cli.ts';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
let folder: string;
let dataDir: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-large-pages-'));
  dataDir = await mkdtemp(join(tmpdir(), 'rag-large-pages-data-'));
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
});

/** A contents page of nested lists of links, as Sphinx writes one for a whole manual: about 15 MB. */
function manualContents(entries = 100_000): string {
  const items = Array.from({ length: entries }, (_, n) => `<li><a href="p${n % 500}.html#s${n}">Section ${n}: configuring replica ${n}</a><ul><li><a href="p${n}.html">Subsection ${n}</a></li></ul></li>`);
  return `<html><head><title>Contents</title></head><body><div role="main"><h1>Contents</h1><ul>${items.join('\n')}</ul></div></body></html>`;
}

it('a page past INGEST_CONVERT_TIMEOUT_MS fails alone with RAG_CONVERSION_TIMEOUT; the other documents are indexed', async () => {
  await writeFile(join(folder, 'contents.html'), manualContents());
  await writeFile(join(folder, 'guide.md'), guide(3));
  const run = await runIngestCli(dataDir, [folder], { INGEST_CONVERT_TIMEOUT_MS: '1000', INGEST_LINK_PAGES: 'full' });
  expect(run.code, run.stderr).toBe(1);
  expect(run.lastLine).toMatch(/^done: 2 files, [1-9]\d* chunks, [1-9]\d* upserts, 0 deletes, 0 skipped, 1 errors$/);
  expect(run.stderr).toMatch(/^failed: contents\.html: .*INGEST_CONVERT_TIMEOUT_MS.*\(contents\.html: stopped after 1 s\)$/m);
});

it('SIGTERM while a page converts stops the run at once, long before the page could have been converted', async () => {
  const page = manualContents();
  await writeFile(join(folder, 'contents.html'), page);
  // What converting it takes when nothing stops it, measured here.
  const started = performance.now();
  chunkDocument(htmlToDocument(page, { linkPages: 'full' }), 'contents.html', { chunkSize: 1200, chunkOverlap: 200 });
  const conversionMs = performance.now() - started;

  const child = spawn(process.execPath, ['--import', 'tsx', 'ingest/src/cli.ts', folder], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, RAG_DATA_DIR: dataDir, LOG_LEVEL: 'debug', LANCEDB_LOG: 'error', INGEST_LINK_PAGES: 'full' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let signalledAt = 0;
  child.stdout.on('data', (part: Buffer) => (stdout += part.toString()));
  child.stderr.on('data', (part: Buffer) => {
    stderr += part.toString();
    if (signalledAt === 0 && /"msg":"converting"/.test(stderr)) {
      signalledAt = performance.now();
      child.kill('SIGTERM');
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const stoppedAfterMs = performance.now() - signalledAt;

  expect(signalledAt, stderr).toBeGreaterThan(0);
  expect(code, stderr).toBe(3);
  expect(stdout.trimEnd().split('\n').at(-1)).toBe('done: 1 files, 0 chunks, 0 upserts, 0 deletes, 0 skipped, 0 errors');
  expect(stderr).toMatch(/RAG_INGEST_INTERRUPTED: .*1 of the 1 documents listed so far not synced/);
  expect(stoppedAfterMs, `stopped ${Math.round(stoppedAfterMs)} ms after SIGTERM; the page converts in ${Math.round(conversionMs)} ms`).toBeLessThan(conversionMs / 2);
});
