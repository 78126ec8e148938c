/**
 * Runs that stop before the end: stopped by their signal (SIGTERM to the ingest job), or killed in the
 * middle of a write. Either way no document may be left looking complete when it is not, nothing may
 * be pruned from a listing the run did not finish, and the next run must leave the index as a fresh
 * run would.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddingModelLock, Embedder, IndexedChunk } from '../../src/index.ts';
import { LocalDirectorySource } from '../../src/ingestion.ts';
import { guide } from './fixture-folder.ts';
import { startHarness, type Harness } from './ingest-harness.ts';

let folder: string;
const harnesses: Harness[] = [];

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rag-interrupted-'));
});

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close();
  await rm(folder, { recursive: true, force: true });
});

async function harness(): Promise<Harness> {
  const started = await startHarness();
  harnesses.push(started);
  return started;
}

async function writeGuides(names: string[], sections: number, edition = 'alpha'): Promise<void> {
  for (const name of names) await writeFile(join(folder, name), guide(sections, `${edition} ${name}`));
}

/** What a first run into an empty store makes of the folder as it is now: the state a healed index must reach. */
async function freshIndexOfFolder() {
  const fresh = await harness();
  await fresh.run(new LocalDirectorySource(folder));
  return fresh.snapshot();
}

/** The harness's embedder, whose calls after the first `answered` wait until the run is stopped. */
class StallingEmbedder implements Embedder {
  readonly modelId: string;
  calls = 0;
  private markStalled!: () => void;
  /** Settles when a call is waiting: the run is then in the middle of embedding a document. */
  readonly stalled = new Promise<void>((resolve) => (this.markStalled = resolve));

  constructor(
    private readonly inner: Embedder,
    private readonly answered: number,
  ) {
    this.modelId = inner.modelId;
  }

  describe(): Promise<EmbeddingModelLock> {
    return this.inner.describe();
  }

  async embedDocuments(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    this.calls += 1;
    if (this.calls <= this.answered) return this.inner.embedDocuments(texts);
    this.markStalled();
    return new Promise((_, reject) => signal!.addEventListener('abort', () => reject(signal!.reason), { once: true }));
  }

  embedQuery(text: string): Promise<number[]> {
    return this.inner.embedQuery(text);
  }
}

const GUIDES = Array.from({ length: 12 }, (_, index) => `guide-${String(index).padStart(2, '0')}.md`);

describe('a run stopped by its signal', () => {
  it('writes what it had ready, abandons the rest without failing it, prunes nothing, and the next run completes the sync', async () => {
    const index = await harness();
    await writeGuides(['retired.md'], 2);
    await index.run(new LocalDirectorySource(folder));
    await rm(join(folder, 'retired.md'));
    await writeGuides(GUIDES, 3);
    const stop = new AbortController();
    const embedder = new StallingEmbedder(index.embedder, 4);

    const running = index.run(new LocalDirectorySource(folder), { embedder, signal: stop.signal, concurrency: 2 });
    await embedder.stalled;
    stop.abort(new Error('stopped by SIGTERM'));
    const stopped = await running;

    expect(stopped.interrupted).toBe(true);
    expect(stopped.errors).toBe(0);
    expect(stopped.abandoned).toBeGreaterThan(0);
    expect(stopped.upserts).toBeGreaterThan(0);
    expect(stopped.chunks).toBe(stopped.upserts);
    expect(stopped.deletes).toBe(0);
    const afterStop = await index.snapshot();
    expect(afterStop.has('retired.md'), 'a run that did not finish its listing must not prune').toBe(true);
    const written = GUIDES.filter((name) => afterStop.has(name));
    expect(written.length).toBeGreaterThan(0);
    expect(written.length).toBeLessThan(GUIDES.length);

    const rerun = await index.run(new LocalDirectorySource(folder));

    expect(rerun.interrupted).toBe(false);
    expect(rerun.errors).toBe(0);
    expect(rerun.unchanged).toBe(written.length);
    expect(await index.snapshot()).toEqual(await freshIndexOfFolder());
  });

  it('starts nothing when stopped before the listing', async () => {
    const index = await harness();
    await writeGuides(GUIDES.slice(0, 3), 2);
    const stop = new AbortController();
    stop.abort(new Error('stopped by SIGTERM'));

    const summary = await index.run(new LocalDirectorySource(folder), { signal: stop.signal });

    expect(summary.interrupted).toBe(true);
    expect(summary.toLine()).toBe('done: 0 files, 0 chunks, 0 upserts, 0 deletes, 0 skipped, 0 errors');
    expect(await index.store.count()).toBe(0);
  });
});

describe('a run killed in the middle of an upsert that the store applies in several requests', () => {
  /**
   * The store writes the first `points` points of the upsert and the process dies: what a Qdrant upsert
   * of more than 64 points leaves when the ingest job is killed between two of its requests.
   */
  function killDuringUpserts(index: Harness, points: number): void {
    index.store.upsert = async (chunks: IndexedChunk[]) => {
      await index.store.inner.upsert(chunks.slice(0, points));
      throw new Error('killed');
    };
  }

  it('re-syncs a new document of which only some chunks were written', async () => {
    const index = await harness();
    await writeGuides(['new.md'], 8);
    killDuringUpserts(index, 3);
    await index.run(new LocalDirectorySource(folder));
    expect((await index.snapshot()).get('new.md')?.chunkIds).toHaveLength(3);

    delete (index.store as Partial<typeof index.store>).upsert; // the next run: a healthy store again
    const rerun = await index.run(new LocalDirectorySource(folder));

    expect(rerun.unchanged).toBe(0);
    expect(await index.snapshot()).toEqual(await freshIndexOfFolder());
  });

  it('re-syncs a grown document whose new chunks were written only in part', async () => {
    const index = await harness();
    await writeGuides(['grown.md'], 1);
    await index.run(new LocalDirectorySource(folder));
    const before = (await index.snapshot()).get('grown.md')!.chunkIds.length;
    await writeGuides(['grown.md'], 8, 'bravo');
    killDuringUpserts(index, before + 1);
    await index.run(new LocalDirectorySource(folder));

    delete (index.store as Partial<typeof index.store>).upsert;
    const rerun = await index.run(new LocalDirectorySource(folder));

    expect(rerun.unchanged).toBe(0);
    expect(await index.snapshot()).toEqual(await freshIndexOfFolder());
  });
});
