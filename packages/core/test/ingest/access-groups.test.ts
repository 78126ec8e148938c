/**
 * Access groups through the real ingest pipeline: from a folder's .rag-access.yaml and from GCS custom
 * metadata to every chunk, and a change of groups alone applied in place: nothing read, converted or
 * embedded, every chunk of the document rewritten.
 */
import { mkdir, mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeQuery } from '../../src/index.ts';
import { ACCESS_FILE, GcsSource, LocalDirectorySource } from '../../src/ingestion.ts';
import { FakeGcsServer } from './fake-gcs-server.ts';
import { guide } from './fixture-folder.ts';
import { startHarness, type Harness } from './ingest-harness.ts';

let harness: Harness;
let folder: string;

beforeEach(async () => {
  harness = await startHarness();
  folder = await mkdtemp(join(tmpdir(), 'rag-access-corpus-'));
  await mkdir(join(folder, 'hr'));
  await writeFile(join(folder, 'hr', 'pay.md'), guide(4, 'payroll'));
  await writeFile(join(folder, 'welcome.md'), guide(2, 'welcome'));
  await writeFile(join(folder, ACCESS_FILE), 'rules:\n  - path: "hr/**"\n    groups: [hr]\n');
});

afterEach(async () => {
  await harness.close();
  await rm(folder, { recursive: true, force: true });
});

async function groupsBySource(): Promise<Record<string, readonly string[] | undefined>> {
  return Object.fromEntries((await harness.store.listDocuments()).map((document) => [document.source, document.groups]));
}

/** Sources a caller of these groups finds for a query every chunk of the corpus matches. */
async function visibleSources(visibleGroups: string[]): Promise<string[]> {
  const hits = await harness.store.search({ sparse: encodeQuery('credential'), limit: 50, prefetchLimit: 50, visibleGroups });
  return [...new Set(hits.map((hit) => hit.source))].sort();
}

describe('access groups from a folder', () => {
  it('stores each document\'s groups with every chunk, never indexing the access file', async () => {
    const summary = await harness.run(new LocalDirectorySource(folder));

    expect(summary.files).toBe(2);
    expect(await groupsBySource()).toEqual({ 'hr/pay.md': ['hr'], 'welcome.md': [] });
    expect(await visibleSources([])).toEqual(['welcome.md']);
    expect(await visibleSources(['hr'])).toEqual(['hr/pay.md', 'welcome.md']);
  });

  it('applies a change of groups alone in place: no read, no embedding, no upsert; its chunks count in U', async () => {
    await harness.run(new LocalDirectorySource(folder));
    const hrChunks = (await harness.snapshot()).get('hr/pay.md')!.chunkIds.length;
    await writeFile(join(folder, ACCESS_FILE), 'rules:\n  - path: "hr/**"\n    groups: [hr, payroll]\n  - path: "welcome.md"\n    groups: [staff]\n');

    const summary = await harness.run(new LocalDirectorySource(folder));

    expect(harness.embedder.calls).toBe(0);
    expect(harness.store.upsertedPoints).toBe(0);
    expect(harness.store.groupUpdates).toEqual([
      { source: 'hr/pay.md', groups: ['hr', 'payroll'] },
      { source: 'welcome.md', groups: ['staff'] },
    ]);
    expect(summary.groupUpdates).toBe(2);
    expect(summary.toLine()).toBe(`done: 2 files, 0 chunks, ${hrChunks + 2} upserts, 0 deletes, 0 skipped, 0 errors`);
    expect(await groupsBySource()).toEqual({ 'hr/pay.md': ['hr', 'payroll'], 'welcome.md': ['staff'] });
    expect(await visibleSources([])).toEqual([]);
    expect(await visibleSources(['payroll'])).toEqual(['hr/pay.md']);

    // Nothing changed since: nothing is written.
    const again = await harness.run(new LocalDirectorySource(folder));
    expect(harness.store.groupUpdates).toEqual([]);
    expect(again.unchanged).toBe(2);
  });

  it('keeps restricted documents as they are when the access file goes away, even edited, and says so (RAG_ACCESS_WOULD_PUBLISH)', async () => {
    await harness.run(new LocalDirectorySource(folder));
    const before = await harness.snapshot();
    await unlink(join(folder, ACCESS_FILE));
    await writeFile(join(folder, 'hr', 'pay.md'), guide(5, 'payroll v2'));

    const dryRun = await harness.run(new LocalDirectorySource(folder), { dryRun: true });
    expect(dryRun.keptRestricted).toEqual(['hr/pay.md']);
    const summary = await harness.run(new LocalDirectorySource(folder));

    expect(summary.keptRestricted).toEqual(['hr/pay.md']);
    expect(summary.errors).toBe(0);
    expect(harness.store.upsertedPoints + harness.store.groupUpdates.length).toBe(0);
    expect(await harness.snapshot()).toEqual(before);
    expect(await groupsBySource()).toEqual({ 'hr/pay.md': ['hr'], 'welcome.md': [] });
    expect(await visibleSources([])).toEqual(['welcome.md']);
  });

  it('makes them public on purpose: with allowPublish (--allow-publish), or with an access file of no rules', async () => {
    await harness.run(new LocalDirectorySource(folder));
    await unlink(join(folder, ACCESS_FILE));

    const allowed = await harness.run(new LocalDirectorySource(folder), { allowPublish: true });

    expect(allowed.keptRestricted).toEqual([]);
    expect(harness.embedder.calls).toBe(0);
    expect(await groupsBySource()).toEqual({ 'hr/pay.md': [], 'welcome.md': [] });
    expect(await visibleSources([])).toEqual(['hr/pay.md', 'welcome.md']);

    await writeFile(join(folder, ACCESS_FILE), 'rules:\n  - path: "hr/**"\n    groups: [hr]\n');
    await harness.run(new LocalDirectorySource(folder));
    await writeFile(join(folder, ACCESS_FILE), 'rules: []\n');
    const emptied = await harness.run(new LocalDirectorySource(folder));
    expect(emptied.keptRestricted).toEqual([]);
    expect(await groupsBySource()).toEqual({ 'hr/pay.md': [], 'welcome.md': [] });
  });

  it('writes nothing when the access file is renamed to a look-alike (.rag-access.yml)', async () => {
    await harness.run(new LocalDirectorySource(folder));
    const before = await harness.snapshot();
    await rename(join(folder, ACCESS_FILE), join(folder, '.rag-access.yml'));

    await expect(harness.run(new LocalDirectorySource(folder))).rejects.toMatchObject({ code: 'RAG_ACCESS_FILE_INVALID', message: expect.stringContaining('.rag-access.yml') });

    expect(harness.store.upsertedPoints + harness.store.deletedPoints + harness.store.groupUpdates.length).toBe(0);
    expect(await harness.snapshot()).toEqual(before);
  });

  it('writes the new groups with the new chunks when content and groups change together', async () => {
    await harness.run(new LocalDirectorySource(folder));
    await writeFile(join(folder, 'hr', 'pay.md'), guide(5, 'payroll v2'));
    await writeFile(join(folder, ACCESS_FILE), 'rules:\n  - path: "hr/**"\n    groups: [finance]\n');

    const summary = await harness.run(new LocalDirectorySource(folder));

    expect(harness.embedder.calls).toBeGreaterThan(0);
    expect(harness.store.groupUpdates).toEqual([]);
    expect(summary.groupUpdates).toBe(0);
    expect(await groupsBySource()).toEqual({ 'hr/pay.md': ['finance'], 'welcome.md': [] });
    expect(await visibleSources(['hr'])).toEqual(['welcome.md']);
  });

  it('writes nothing and prunes nothing when the access file is invalid', async () => {
    await harness.run(new LocalDirectorySource(folder));
    const before = await harness.snapshot();
    await writeFile(join(folder, ACCESS_FILE), 'rules:\n  - path: "hr/**"\n');
    await writeFile(join(folder, 'new.md'), guide(1, 'new'));

    await expect(harness.run(new LocalDirectorySource(folder))).rejects.toMatchObject({ code: 'RAG_ACCESS_FILE_INVALID' });

    expect(harness.store.upsertedPoints + harness.store.deletedPoints + harness.store.groupUpdates.length).toBe(0);
    expect(await harness.snapshot()).toEqual(before);
  });
});

describe('access groups from GCS custom metadata', () => {
  let server: FakeGcsServer;

  beforeEach(async () => {
    server = await new FakeGcsServer('team-docs', 2).start();
  });

  afterEach(() => server.close());

  const source = () => new GcsSource({ bucket: 'team-docs', prefix: 'handbook/', apiEndpoint: server.baseUrl, pageSize: 2 });

  it('reads `rag-groups` (comma-separated) from the listing, and applies a metadata change without downloading or embedding', async () => {
    server.put('handbook/hr/pay.md', guide(3, 'payroll'), { 'rag-groups': 'hr, payroll' });
    server.put('handbook/welcome.md', guide(2, 'welcome'));
    server.put('handbook/ops.md', guide(2, 'ops'), { owner: 'ops-team' });

    await harness.run(source());

    expect(await groupsBySource()).toEqual({ 'gs://team-docs/handbook/hr/pay.md': ['hr', 'payroll'], 'gs://team-docs/handbook/ops.md': [], 'gs://team-docs/handbook/welcome.md': [] });
    expect(await visibleSources([])).toEqual(['gs://team-docs/handbook/ops.md', 'gs://team-docs/handbook/welcome.md']);

    server.requests.length = 0;
    server.setMetadata('handbook/welcome.md', { 'rag-groups': 'staff' });
    server.setMetadata('handbook/hr/pay.md', undefined);
    const summary = await harness.run(source());

    expect(server.downloads()).toEqual([]);
    expect(harness.embedder.calls).toBe(0);
    expect(summary.groupUpdates).toBe(2);
    expect(await groupsBySource()).toEqual({ 'gs://team-docs/handbook/hr/pay.md': [], 'gs://team-docs/handbook/ops.md': [], 'gs://team-docs/handbook/welcome.md': ['staff'] });
  });
});
