import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GcsSource, parseGcsUri, type SourceDocument } from '../../src/ingestion.ts';
import { FakeGcsServer } from './fake-gcs-server.ts';
import { guide } from './fixture-folder.ts';
import { startHarness, type Harness } from './ingest-harness.ts';

let server: FakeGcsServer;

beforeEach(async () => {
  // Two objects a page, so that any bucket of more than two documents is listed over several pages.
  server = await new FakeGcsServer('team-docs', 2).start();
});

afterEach(() => server.close());

function sourceOf(prefix: string): GcsSource {
  return new GcsSource({ bucket: 'team-docs', prefix, apiEndpoint: server.baseUrl, pageSize: 2 });
}

async function listAll(source: GcsSource): Promise<SourceDocument[]> {
  const documents: SourceDocument[] = [];
  for await (const document of source.list()) documents.push(document);
  return documents;
}

describe('GCS source', () => {
  it('lists every object under the prefix across pages, without downloading, and skips folder placeholders', async () => {
    for (const name of ['handbook/a.md', 'handbook/b.md', 'handbook/c/', 'handbook/c/d.md', 'handbook/e.html', 'other/x.md']) server.put(name, `# ${name}`);

    const documents = await listAll(sourceOf('handbook/'));

    expect(documents.map((document) => document.uri)).toEqual(['gs://team-docs/handbook/a.md', 'gs://team-docs/handbook/b.md', 'gs://team-docs/handbook/c/d.md', 'gs://team-docs/handbook/e.html']);
    expect(server.downloads()).toEqual([]);
    const lists = server.lists();
    expect(lists.map((request) => request.path)).toEqual(Array(3).fill('/storage/v1/b/team-docs/o'));
    expect(lists.map((request) => request.query.get('prefix'))).toEqual(['handbook/', 'handbook/', 'handbook/']);
    expect(lists.map((request) => request.query.get('pageToken'))).toEqual([null, '2', '4']);
    expect(lists[0]!.query.get('maxResults')).toBe('2');
  });

  it('reads an object with a media download and versions it by its MD5', async () => {
    server.put('handbook/a.md', '# A\n\nBody');

    const [document] = await listAll(sourceOf('handbook/'));

    expect(document!.sourceVersion).toMatch(/^md5:[A-Za-z0-9+/]+=*$/);
    expect((await document!.read()).toString()).toBe('# A\n\nBody');
    expect(server.requests.at(-1)).toMatchObject({ method: 'GET', path: '/storage/v1/b/team-docs/o/handbook%2Fa.md' });
    expect(server.requests.at(-1)!.query.get('alt')).toBe('media');
  });

  it('fails the listing with RAG_SOURCE_UNAVAILABLE when the bucket does not answer', async () => {
    const source = new GcsSource({ bucket: 'missing-bucket', prefix: '', apiEndpoint: server.baseUrl });

    await expect(listAll(source)).rejects.toMatchObject({ code: 'RAG_SOURCE_UNAVAILABLE', message: expect.stringContaining('gs://missing-bucket/') });
  });

  it('parses gs:// locations', () => {
    expect(parseGcsUri('gs://bucket/some/prefix/')).toEqual({ bucket: 'bucket', prefix: 'some/prefix/' });
    expect(parseGcsUri('gs://bucket')).toEqual({ bucket: 'bucket', prefix: '' });
    expect(parseGcsUri('./docs')).toBeUndefined();
  });
});

describe('incremental sync of a bucket', () => {
  let harness: Harness;

  beforeEach(async () => {
    harness = await startHarness();
    for (let index = 1; index <= 5; index += 1) server.put(`handbook/guide-${index}.md`, guide(3, `edition${index}`));
  });

  afterEach(() => harness.close());

  it('skips unchanged objects without downloading them, even re-uploaded with a new generation', async () => {
    const first = await harness.run(sourceOf('handbook/'));
    expect(first).toMatchObject({ files: 5, errors: 0 });
    expect(server.downloads()).toHaveLength(5);
    server.requests.length = 0;
    server.put('handbook/guide-2.md', guide(3, 'edition2'));

    const rerun = await harness.run(sourceOf('handbook/'));

    expect(server.downloads()).toEqual([]);
    expect(harness.embedder.calls).toBe(0);
    expect(harness.store.upsertCalls).toBe(0);
    expect(rerun.toLine()).toBe('done: 5 files, 0 chunks, 0 upserts, 0 deletes, 5 skipped, 0 errors');
  });

  it('downloads and re-indexes only a changed object, and prunes a deleted one', async () => {
    await harness.run(sourceOf('handbook/'));
    const before = await harness.snapshot();
    server.requests.length = 0;
    server.put('handbook/guide-3.md', guide(1, 'rewritten'));
    server.remove('handbook/guide-5.md');

    const summary = await harness.run(sourceOf('handbook/'));

    expect(server.downloads()).toEqual(['handbook/guide-3.md']);
    expect(summary.unchanged).toBe(3);
    const after = await harness.snapshot();
    const chunksOf = (snapshot: typeof before, index: number) => snapshot.get(`gs://team-docs/handbook/guide-${index}.md`)?.chunkIds.length ?? 0;
    expect([...after.keys()]).toEqual([1, 2, 3, 4].map((index) => `gs://team-docs/handbook/guide-${index}.md`));
    expect(chunksOf(after, 3)).toBeLessThan(chunksOf(before, 3));
    expect(summary.deletes).toBe(chunksOf(before, 5) + chunksOf(before, 3) - chunksOf(after, 3));
  });
});
