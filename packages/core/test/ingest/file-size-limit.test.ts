/** INGEST_MAX_FILE_BYTES: a larger document is refused, unread when the listing gives its size. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GcsSource, LocalDirectorySource, type DocumentSource } from '../../src/ingestion.ts';
import { FakeGcsServer } from './fake-gcs-server.ts';
import { guide } from './fixture-folder.ts';
import { startHarness, type Harness } from './ingest-harness.ts';

let folder: string;
let harness: Harness;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-file-size-'));
  harness = await startHarness();
});

afterEach(async () => {
  await harness.close();
  await rm(folder, { recursive: true, force: true });
});

/** The folder's documents, recording which were read; `withoutSize` hides the size the listing gives. */
function recordingSource(inner: DocumentSource, options: { withoutSize?: boolean } = {}) {
  const read: string[] = [];
  const source: DocumentSource = {
    description: inner.description,
    async *list(signal) {
      for await (const document of inner.list(signal)) {
        yield {
          ...document,
          ...(options.withoutSize ? { size: undefined } : {}),
          read: (readSignal) => {
            read.push(document.uri);
            return document.read(readSignal);
          },
        };
      }
    },
  };
  return { source, read };
}

describe('INGEST_MAX_FILE_BYTES', () => {
  beforeEach(async () => {
    await writeFile(join(folder, 'small.md'), '# Small\n\nA short note about rotating keys.\n');
    await writeFile(join(folder, 'large.md'), guide(20, 'oversized'));
  });

  it('refuses a larger file unread when the listing gives its size, counts it in E, and indexes the rest', async () => {
    const { source, read } = recordingSource(new LocalDirectorySource(folder));

    const summary = await harness.run(source, { maxFileBytes: 1_000 });

    expect(summary.errors).toBe(1);
    expect(summary.failures[0]).toMatchObject({ uri: 'large.md', code: 'RAG_DOCUMENT_TOO_LARGE' });
    expect(summary.failures[0]!.reason).toMatch(/\(\d{1,3}(,\d{3})* bytes, the limit is 1,000\)$/);
    expect(read).toEqual(['small.md']);
    expect([...(await harness.snapshot()).keys()]).toEqual(['small.md']);
  });

  it('refuses it once read when the source does not give the size', async () => {
    const { source, read } = recordingSource(new LocalDirectorySource(folder), { withoutSize: true });

    const summary = await harness.run(source, { maxFileBytes: 1_000 });

    expect(summary.failures.map((failure) => [failure.uri, failure.code])).toEqual([['large.md', 'RAG_DOCUMENT_TOO_LARGE']]);
    expect(read.sort()).toEqual(['large.md', 'small.md']);
    expect([...(await harness.snapshot()).keys()]).toEqual(['small.md']);
  });

  it('keeps the previous points of a document that grew past the limit, and does not block pruning', async () => {
    // large.md is indexed under the first limit and, unchanged, skipped unread under the second.
    for (const name of ['a.md', 'b.md']) await writeFile(join(folder, name), `# ${name}\n\nShort.\n`);
    await harness.run(new LocalDirectorySource(folder), { maxFileBytes: 100_000 });
    const before = await harness.snapshot();
    await writeFile(join(folder, 'small.md'), guide(20, 'grown'));
    await rm(join(folder, 'a.md'));

    const summary = await harness.run(new LocalDirectorySource(folder), { maxFileBytes: 1_000 });

    expect(summary.failures.map((failure) => [failure.uri, failure.code])).toEqual([['small.md', 'RAG_DOCUMENT_TOO_LARGE']]);
    expect(summary.unchanged).toBe(2);
    const after = await harness.snapshot();
    expect(after.get('small.md')).toEqual(before.get('small.md'));
    expect(after.has('a.md'), 'pruned').toBe(false);
  });

  it('refuses a larger GCS object by the size in the listing, without downloading it', async () => {
    const gcs = await new FakeGcsServer('team-docs').start();
    try {
      gcs.put('handbook/small.md', '# Small\n\nA short note.\n');
      gcs.put('handbook/large.md', guide(20, 'oversized'));

      const summary = await harness.run(new GcsSource({ bucket: 'team-docs', prefix: 'handbook/', apiEndpoint: gcs.baseUrl }), { maxFileBytes: 1_000 });

      expect(summary.failures.map((failure) => [failure.uri, failure.code])).toEqual([['gs://team-docs/handbook/large.md', 'RAG_DOCUMENT_TOO_LARGE']]);
      expect(gcs.downloads()).toEqual(['handbook/small.md']);
    } finally {
      await gcs.close();
    }
  });
});
