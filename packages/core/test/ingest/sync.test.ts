import { rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import { encodeQuery, RagError } from '../../src/index.ts';
import { LocalDirectorySource, type DocumentSource, type SourceDocument } from '../../src/ingestion.ts';
import { corruptPdf, imageOnlyPdf } from './fixture-documents.ts';
import { guide, makeCorpus, SUPPORTED_DOCUMENTS } from './fixture-folder.ts';
import { startHarness, type Harness } from './ingest-harness.ts';

let corpus: Awaited<ReturnType<typeof makeCorpus>>;
let harness: Harness;
let source: DocumentSource;
const harnesses: Harness[] = [];

beforeEach(async () => {
  corpus = await makeCorpus();
  harness = await startHarness();
  harnesses.push(harness);
  source = new LocalDirectorySource(corpus.folder);
});

afterEach(async () => {
  for (const opened of harnesses.splice(0)) await opened.close();
  await corpus.remove();
});

/** What a first run into an empty store makes of the folder as it is now: the state a healed index must reach. */
async function freshIndexOfFolder() {
  const fresh = await startHarness();
  harnesses.push(fresh);
  await fresh.run(new LocalDirectorySource(corpus.folder));
  return fresh.snapshot();
}

async function sourcesMatching(text: string): Promise<string[]> {
  const hits = await harness.store.search({ sparse: encodeQuery(text), limit: 20, prefetchLimit: 20, visibleGroups: [] });
  return [...new Set(hits.map((hit) => hit.source))];
}

describe('incremental sync of a folder', () => {
  it('indexes every supported document on the first run and skips the unsupported one', async () => {
    const summary = await harness.run(source);

    expect(summary.files).toBe(6);
    expect(summary.unsupported).toBe(1);
    expect(summary.errors).toBe(0);
    expect([...(await harness.snapshot()).keys()]).toEqual(SUPPORTED_DOCUMENTS);
    expect(summary.upserts).toBe(summary.chunks);
    expect(await harness.store.count()).toBe(summary.chunks);
    expect(harness.embedder.texts).toBe(summary.chunks);
    expect(summary.toLine()).toBe(`done: 6 files, ${summary.chunks} chunks, ${summary.chunks} upserts, 0 deletes, 1 skipped, 0 errors`);
  });

  it('does nothing on an unchanged re-run: no embedding call, no write, everything skipped', async () => {
    await harness.run(source);
    const before = await harness.snapshot();

    const summary = await harness.run(source);

    expect(harness.embedder.calls).toBe(0);
    expect(harness.store.upsertCalls).toBe(0);
    expect(harness.store.deletedPoints).toBe(0);
    expect(summary.toLine()).toBe('done: 6 files, 0 chunks, 0 upserts, 0 deletes, 6 skipped, 0 errors');
    expect(await harness.snapshot()).toEqual(before);
  });

  it('skips a touched but unchanged file by its content hash', async () => {
    await harness.run(source);
    const later = new Date(Date.now() + 60_000);
    await utimes(join(corpus.folder, 'guide.md'), later, later);

    const summary = await harness.run(source);

    expect(harness.embedder.calls).toBe(0);
    expect(summary.upserts).toBe(0);
    expect(summary.unchanged).toBe(5);
  });

  it('re-embeds only the edited document', async () => {
    await harness.run(source);
    const before = await harness.snapshot();
    await writeFile(join(corpus.folder, 'guide.md'), guide(6, 'bravo'));

    const summary = await harness.run(source);

    const after = await harness.snapshot();
    expect(harness.store.upsertCalls).toBe(1);
    expect(summary.upserts).toBe(after.get('guide.md')!.chunkIds.length);
    expect(summary.unchanged).toBe(4);
    expect(after.get('guide.md')!.contentHash).not.toBe(before.get('guide.md')!.contentHash);
    for (const other of SUPPORTED_DOCUMENTS.filter((name) => name !== 'guide.md')) expect(after.get(other)).toEqual(before.get(other));
    expect(await sourcesMatching('bravo')).toEqual(['guide.md']);
  });

  it('removes the chunks past the new end of a shrunk document', async () => {
    await harness.run(source);
    const oldChunks = (await harness.snapshot()).get('guide.md')!.chunkIds.length;
    expect(oldChunks).toBeGreaterThan(3);
    await writeFile(join(corpus.folder, 'guide.md'), '# Operator guide\n\nOnly the introduction is left.\n');

    const summary = await harness.run(source);

    expect((await harness.snapshot()).get('guide.md')!.chunkIds).toEqual([chunkId('guide.md', 0)]);
    expect(summary.deletes).toBe(oldChunks - 1);
    expect(await sourcesMatching('alpha')).toEqual([]);
  });

  it('prunes a deleted document, unless --no-prune', async () => {
    await harness.run(source);
    const pageChunks = (await harness.snapshot()).get('status.html')!.chunkIds.length;
    await rm(join(corpus.folder, 'status.html'));

    const kept = await harness.run(source, { prune: false });
    expect(kept.deletes).toBe(0);
    expect((await harness.snapshot()).has('status.html')).toBe(true);

    const pruned = await harness.run(source);
    expect(pruned.deletes).toBe(pageChunks);
    expect((await harness.snapshot()).has('status.html')).toBe(false);
    expect(await sourcesMatching('bridgeline')).toEqual([]);
  });

  it('counts a corrupt document as one error and indexes everything else', async () => {
    await writeFile(join(corpus.folder, 'broken.pdf'), corruptPdf());

    const summary = await harness.run(source);

    expect(summary.errors).toBe(1);
    expect(summary.failures[0]).toMatchObject({ uri: 'broken.pdf', code: 'RAG_DOCUMENT_UNREADABLE' });
    expect(summary.failures[0]!.reason).toContain('not a readable PDF');
    expect([...(await harness.snapshot()).keys()]).toEqual(SUPPORTED_DOCUMENTS);
  });

  it('reports a PDF with no text as such instead of indexing it empty', async () => {
    await writeFile(join(corpus.folder, 'scan.pdf'), await imageOnlyPdf());

    const summary = await harness.run(source);

    expect(summary.failures).toEqual([
      { uri: 'scan.pdf', code: 'RAG_DOCUMENT_UNREADABLE', reason: expect.stringContaining('no extractable text (scanned or image-only PDF?)') },
    ]);
    expect((await harness.snapshot()).has('scan.pdf')).toBe(false);
  });

  it('keeps every indexed document searchable when a run dies mid-way, and the next run heals', async () => {
    await harness.run(source);
    const indexedBefore = await harness.snapshot();
    for (const [name, sections] of [['guide.md', 2], ['a-new.md', 3], ['z-new.md', 1]] as const) {
      await writeFile(join(corpus.folder, name), guide(sections, 'charlie'));
    }
    await rm(join(corpus.folder, 'status.html'));
    harness.store.failUpsertsAfter = 1;

    const interrupted = await harness.run(source);

    expect(interrupted.errors).toBe(2);
    const afterCrash = await harness.snapshot();
    for (const [name, document] of indexedBefore) {
      expect(afterCrash.get(name)?.chunkIds.length, name).toBeGreaterThan(0);
      if (name !== 'guide.md') expect(afterCrash.get(name), name).toEqual(document);
    }
    // The deleted page is not pruned by a run that failed to write: it may have been renamed.
    expect(afterCrash.has('status.html')).toBe(true);

    harness.store.failUpsertsAfter = Number.POSITIVE_INFINITY;
    const healing = await harness.run(source);

    expect(healing.errors).toBe(0);
    expect(await harness.snapshot()).toEqual(await freshIndexOfFolder());
  });

  it('heals a document whose stale chunks were not deleted when the run stopped', async () => {
    await harness.run(source);
    await writeFile(join(corpus.folder, 'guide.md'), guide(1, 'delta'));
    harness.store.failDeletesAfter = 0;

    const interrupted = await harness.run(source);

    expect(interrupted.errors).toBe(1);
    expect(await sourcesMatching('delta')).toEqual(['guide.md']);
    harness.store.failDeletesAfter = Number.POSITIVE_INFINITY;
    const healing = await harness.run(source);

    expect(healing.deletes).toBeGreaterThan(0);
    expect(await harness.snapshot()).toEqual(await freshIndexOfFolder());
    expect(await sourcesMatching('alpha')).toEqual([]);
  });

  it('lists each document with its chunk count in a dry run and writes nothing', async () => {
    const planned = new Map<string, number>();

    const summary = await harness.run(source, { dryRun: true, onPlanned: (uri, chunks) => planned.set(uri, chunks) });

    expect([...planned.keys()].sort()).toEqual(SUPPORTED_DOCUMENTS);
    expect([...planned.values()].reduce((sum, chunks) => sum + chunks, 0)).toBe(summary.chunks);
    expect(summary.upserts).toBe(0);
    expect(harness.embedder.calls).toBe(0);
    expect(harness.store.upsertCalls).toBe(0);
    expect(await harness.store.count()).toBe(0);
  });

  it('prunes nothing in a dry run', async () => {
    await harness.run(source);
    await rm(join(corpus.folder, 'guide.md'));

    const summary = await harness.run(source, { dryRun: true });

    expect(summary.deletes).toBe(0);
    expect(harness.store.deletedPoints).toBe(0);
    expect((await harness.snapshot()).has('guide.md')).toBe(true);
  });

  it('prunes nothing when the listing fails part-way', async () => {
    await harness.run(source);
    const before = await harness.snapshot();
    const failingSource: DocumentSource = {
      description: 'a bucket that fails on its second page',
      async *list(): AsyncIterable<SourceDocument> {
        for await (const document of source.list()) {
          yield document;
          throw new RagError('RAG_SOURCE_UNAVAILABLE', 'page 2 failed');
        }
      },
    };

    await expect(harness.run(failingSource)).rejects.toMatchObject({ code: 'RAG_SOURCE_UNAVAILABLE' });
    expect(harness.store.deletedPoints).toBe(0);
    expect(await harness.snapshot()).toEqual(before);
  });

  it('writes many documents in one store batch, upserts before deletes', async () => {
    await harness.run(source);
    const oldGuide = (await harness.snapshot()).get('guide.md')!.chunkIds;
    // guide.md shrinks (its tail chunks become stale) and a new document arrives: one batch holds both.
    await writeFile(join(corpus.folder, 'guide.md'), guide(2, 'echo'));
    await writeFile(join(corpus.folder, 'a-new.md'), guide(3, 'foxtrot'));
    const writes: Array<{ operation: 'upsert' | 'delete'; ids: string[] }> = [];
    const { upsert, deleteByIds } = harness.store;
    harness.store.upsert = (chunks) => {
      writes.push({ operation: 'upsert', ids: chunks.map((chunk) => chunk.id) });
      return upsert.call(harness.store, chunks);
    };
    harness.store.deleteByIds = (ids) => {
      if (ids.length > 0) writes.push({ operation: 'delete', ids });
      return deleteByIds.call(harness.store, ids);
    };

    const summary = await harness.run(source, { writeBatchPoints: 10_000 });

    expect(summary.errors).toBe(0);
    const after = await harness.snapshot();
    const newGuide = after.get('guide.md')!.chunkIds;
    expect(newGuide.length).toBeLessThan(oldGuide.length);
    // One upsert of every new point, then one delete of the stale ones: never a delete before the write.
    expect(writes.map((write) => write.operation)).toEqual(['upsert', 'delete']);
    expect(writes[0]!.ids.sort()).toEqual([...newGuide, ...after.get('a-new.md')!.chunkIds].sort());
    expect(writes[1]!.ids.sort()).toEqual(oldGuide.filter((id) => !newGuide.includes(id)).sort());
    expect(summary.upserts).toBe(writes[0]!.ids.length);
  });

  it('embeds in batches of EMBED_BATCH_SIZE with at most INGEST_CONCURRENCY documents at once', async () => {
    let inFlight = 0;
    let mostInFlight = 0;
    let largestBatch = 0;
    const embedDocuments = harness.embedder.embedDocuments.bind(harness.embedder);
    harness.embedder.embedDocuments = async (texts) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      largestBatch = Math.max(largestBatch, texts.length);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight -= 1;
      return embedDocuments(texts);
    };

    const summary = await harness.run(source, { concurrency: 2, embedBatchSize: 3 });

    expect(summary.errors).toBe(0);
    expect(largestBatch).toBe(3);
    expect(mostInFlight).toBeLessThanOrEqual(2);
    expect(harness.embedder.texts).toBe(summary.chunks);
  });
});
