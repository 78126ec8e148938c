/**
 * The prune guard: a listing that is empty, or that lost more than INGEST_MAX_PRUNE_RATIO of the
 * indexed documents, looks like a mistyped folder or prefix, and must not empty the index.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { guide } from './fixture-folder.ts';
import { useIndexedGuides } from './ingest-harness.ts';

const GUIDES = ['alpha.md', 'bravo.md', 'charlie.md'];

const guides = useIndexedGuides(GUIDES, 'rag-prune-guard-');
const run = guides.run;

describe('the prune guard', () => {
  it('refuses to prune an empty listing and leaves the index as it was', async () => {
    const before = await guides.harness.snapshot();
    await rm(guides.folder, { recursive: true });
    await mkdir(guides.folder);

    const summary = await run();

    expect(summary.toLine()).toBe('done: 0 files, 0 chunks, 0 upserts, 0 deletes, 0 skipped, 0 errors');
    expect(summary.pruneRefused).toEqual({
      deletedDocuments: 3,
      indexedDocuments: 3,
      reason: 'the source listed no document, and this run would delete 3 of 3 indexed documents (e.g. alpha.md, bravo.md, charlie.md)',
    });
    expect(guides.harness.store.deletedPoints).toBe(0);
    expect(await guides.harness.snapshot()).toEqual(before);
  });

  it('refuses an empty listing even when the ratio allows every deletion', async () => {
    for (const name of GUIDES) await rm(join(guides.folder, name));

    const summary = await run({ maxPruneRatio: 1 });

    expect(summary.pruneRefused?.deletedDocuments).toBe(3);
    expect(guides.harness.store.deletedPoints).toBe(0);
  });

  it('prunes normally when the run deletes 1 of 3 documents', async () => {
    const chunks = (await guides.harness.snapshot()).get('charlie.md')!.chunkIds.length;
    await rm(join(guides.folder, 'charlie.md'));

    const summary = await run();

    expect(summary.pruneRefused).toBeUndefined();
    expect(summary.deletes).toBe(chunks);
    expect([...(await guides.harness.snapshot()).keys()]).toEqual(['alpha.md', 'bravo.md']);
  });

  it('refuses to delete 2 of 3 documents, and still writes a new document of the same run', async () => {
    const before = await guides.harness.snapshot();
    await rm(join(guides.folder, 'bravo.md'));
    await rm(join(guides.folder, 'charlie.md'));
    await writeFile(join(guides.folder, 'delta.md'), guide(1, 'delta'));

    const summary = await run();

    expect(summary.pruneRefused).toEqual({
      deletedDocuments: 2,
      indexedDocuments: 3,
      reason: 'this run would delete 2 of 3 indexed documents (66.7 % > INGEST_MAX_PRUNE_RATIO 50 %; e.g. bravo.md, charlie.md)',
    });
    expect(summary.deletes).toBe(0);
    expect(summary.upserts).toBeGreaterThan(0);
    const after = await guides.harness.snapshot();
    expect([...after.keys()]).toEqual(['alpha.md', 'bravo.md', 'charlie.md', 'delta.md']);
    for (const name of GUIDES) expect(after.get(name), name).toEqual(before.get(name));
  });

  it('deletes them with --force-prune', async () => {
    await rm(join(guides.folder, 'bravo.md'));
    await rm(join(guides.folder, 'charlie.md'));

    const summary = await run({ forcePrune: true });

    expect(summary.pruneRefused).toBeUndefined();
    expect(summary.deletes).toBeGreaterThan(0);
    expect([...(await guides.harness.snapshot()).keys()]).toEqual(['alpha.md']);
  });

  it('follows INGEST_MAX_PRUNE_RATIO: 2 of 3 passes under 0.7, 1 of 3 is refused under 0.3', async () => {
    await rm(join(guides.folder, 'charlie.md'));
    expect((await run({ maxPruneRatio: 0.3 })).pruneRefused?.reason).toContain('(33.3 % > INGEST_MAX_PRUNE_RATIO 30 %;');

    await rm(join(guides.folder, 'bravo.md'));
    const summary = await run({ maxPruneRatio: 0.7 });

    expect(summary.pruneRefused).toBeUndefined();
    expect([...(await guides.harness.snapshot()).keys()]).toEqual(['alpha.md']);
  });

  it('reports the refusal in a dry run, with each document it would delete, and writes nothing', async () => {
    for (const name of GUIDES) await rm(join(guides.folder, name));
    const before = await guides.harness.snapshot();
    const plannedPrunes = new Map<string, number>();

    const summary = await run({ dryRun: true, onPlannedPrune: (uri, points) => plannedPrunes.set(uri, points) });

    expect(summary.pruneRefused?.deletedDocuments).toBe(3);
    expect(plannedPrunes).toEqual(new Map([...before].map(([uri, document]) => [uri, document.chunkIds.length])));
    expect(guides.harness.store.deletedPoints).toBe(0);
    expect(await guides.harness.snapshot()).toEqual(before);
  });

  it('never prunes nor refuses in a run stopped by its signal', async () => {
    for (const name of GUIDES) await rm(join(guides.folder, name));
    const stop = new AbortController();
    stop.abort(new Error('stopped by SIGTERM'));

    const summary = await run({ signal: stop.signal, forcePrune: true });

    expect(summary.interrupted).toBe(true);
    expect(summary.pruneRefused).toBeUndefined();
    expect(guides.harness.store.deletedPoints).toBe(0);
  });
});
