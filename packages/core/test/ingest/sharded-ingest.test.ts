/**
 * Ingestion split across the completions of a Kubernetes Indexed Job: each run syncs the share of the
 * listing its index names, never prunes, and one --prune-only run after every share prunes, guard
 * included. Shares come from the uri alone, so re-running one share (an interrupted pod replaced with the
 * same index) resumes where it stopped, and a new document moves nobody else.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inShard, shardIndexOf, type Shard } from '../../src/index.ts';
import { guide } from './fixture-folder.ts';
import { startHarness, useIndexedGuides } from './ingest-harness.ts';
import { LocalDirectorySource } from '../../src/ingestion.ts';

const NAMES = Array.from({ length: 12 }, (_, index) => `guide-${String(index).padStart(2, '0')}.md`);
const SHARDS = 3;
const shards: Shard[] = Array.from({ length: SHARDS }, (_, index) => ({ index, count: SHARDS }));

const guides = useIndexedGuides(NAMES, 'rag-sharded-');

/** The guides of one share, by the same hash the runs use. */
function namesOf(shard: Shard, names = NAMES): string[] {
  return names.filter((name) => inShard(name, shard));
}

describe('the share of a document', () => {
  it('puts every uri in exactly one share, for any number of shares', () => {
    const uris = Array.from({ length: 500 }, (_, index) => `gs://bucket/docs/page-${index}.md`);
    for (const count of [1, 2, 3, 4, 7, 16]) {
      const sizes = new Array<number>(count).fill(0);
      for (const uri of uris) {
        const owners = Array.from({ length: count }, (_, index) => index).filter((index) => inShard(uri, { index, count }));
        expect(owners, uri).toHaveLength(1);
        sizes[owners[0]!] = (sizes[owners[0]!] ?? 0) + 1;
      }
      // A hash, not a round robin: every share gets some of 500 uris.
      for (const size of sizes) expect(size).toBeGreaterThan(500 / count / 2);
    }
  });

  it('depends on the uri alone: pinned values, so a changed hash (which would move documents between the shares of a Job in progress) shows', () => {
    // The first 32 bits of SHA-256("gs://bucket/docs/a.md") are 1814428482: share 2 of 4, 6 of 7.
    expect(shardIndexOf('gs://bucket/docs/a.md', 4)).toBe(2);
    expect(shardIndexOf('gs://bucket/docs/a.md', 7)).toBe(6);
    expect(shardIndexOf('gs://bucket/docs/b.md', 4)).toBe(0);
    expect(shardIndexOf('docs/ingestion.md', 4)).toBe(3);
  });
});

describe('a sharded run', () => {
  it('syncs its share only; the shares are disjoint and together index the whole listing', async () => {
    // Into an empty store: the guides indexed before each test would hide a share that synced nothing.
    const empty = await startHarness();
    const synced: string[][] = [];
    for (const shard of shards) {
      const summary = await empty.run(new LocalDirectorySource(guides.folder), { shard });
      expect(summary.files + summary.otherShards).toBe(NAMES.length);
      expect(summary.files).toBe(namesOf(shard).length);
      expect(summary.shardLine()).toBe(`shard ${shard.index}/${SHARDS}: ${summary.files} of ${NAMES.length} listed documents; pruning is left to one --prune-only run after every shard`);
      synced.push(namesOf(shard));
      expect([...(await empty.snapshot()).keys()].sort()).toEqual(synced.flat().sort());
    }
    await empty.close();
    expect(synced.flat().sort()).toEqual(NAMES);
    expect(new Set(synced.flat()).size).toBe(NAMES.length);
    for (const shard of synced) expect(shard.length).toBeGreaterThan(0);
  });

  it('never prunes, even a document of its own share the source lost', async () => {
    const before = await guides.harness.snapshot();
    const [lost] = namesOf(shards[0]!);
    await rm(join(guides.folder, lost!));

    // A ratio of 1: the guard would let any prune through, so only the shard rule holds it back.
    const summary = await guides.run({ shard: shards[0], maxPruneRatio: 1 });

    expect(summary.pruneRefused).toBeUndefined();
    expect(summary.deletes).toBe(0);
    expect(guides.harness.store.deletedPoints).toBe(0);
    expect(await guides.harness.snapshot()).toEqual(before);
  });

  it('resumes when its pod is replaced after an interruption: what was written is skipped, the rest synced', async () => {
    const edited = namesOf(shards[1]!);
    expect(edited.length).toBeGreaterThanOrEqual(3);
    const before = await guides.harness.snapshot();
    for (const name of NAMES) await writeFile(join(guides.folder, name), guide(2, `second edition of ${name}`));
    const stop = new AbortController();
    let synced = 0;

    const stopped = await guides.run({ shard: shards[1], concurrency: 1, signal: stop.signal, onDocument: () => ++synced === 2 && stop.abort(new Error('SIGTERM')) });
    expect(stopped.interrupted).toBe(true);
    const written = stopped.files - stopped.abandoned;
    expect(written).toBeGreaterThanOrEqual(2);
    expect(written).toBeLessThan(edited.length);

    const resumed = await guides.run({ shard: shards[1] });

    expect(resumed.interrupted).toBe(false);
    expect(resumed.unchanged).toBe(written);
    expect(resumed.files - resumed.unchanged).toBe(edited.length - written);
    const after = await guides.harness.snapshot();
    for (const name of NAMES) {
      if (edited.includes(name)) expect(after.get(name)!.contentHash, name).not.toBe(before.get(name)!.contentHash);
      // The other shares are their own pods' work: untouched here.
      else expect(after.get(name), name).toEqual(before.get(name));
    }
    const again = await guides.run({ shard: shards[1] });
    expect(again.unchanged).toBe(edited.length);
    expect(guides.harness.embedder.calls).toBe(0);
  });
});

describe('--prune-only', () => {
  it('prunes exactly the documents the source lost, once, syncing nothing', async () => {
    const before = await guides.harness.snapshot();
    const lost = [NAMES[3]!, NAMES[8]!];
    for (const name of lost) await rm(join(guides.folder, name));
    await writeFile(join(guides.folder, 'new.md'), guide(2, 'new'));
    await writeFile(join(guides.folder, NAMES[0]!), guide(3, 'edited'));

    const pruned = await guides.run({ pruneOnly: true });

    expect(pruned.files).toBe(NAMES.length - lost.length + 1);
    expect(pruned.deletes).toBe(lost.reduce((total, name) => total + before.get(name)!.chunkIds.length, 0));
    expect(pruned.upserts).toBe(0);
    expect(guides.harness.embedder.calls).toBe(0);
    const after = await guides.harness.snapshot();
    expect([...after.keys()].sort()).toEqual(NAMES.filter((name) => !lost.includes(name)).sort());
    // The edit and the new document are the shards' work, not this run's.
    expect(after.get(NAMES[0]!)).toEqual(before.get(NAMES[0]!));

    const again = await guides.run({ pruneOnly: true });
    expect(again.deletes).toBe(0);
    expect(guides.harness.store.deletedPoints).toBe(0);
  });

  it('keeps the prune guard: a listing that lost most documents, or all, prunes nothing', async () => {
    const before = await guides.harness.snapshot();
    for (const name of NAMES.slice(0, 7)) await rm(join(guides.folder, name));

    const refused = await guides.run({ pruneOnly: true });

    expect(refused.pruneRefused?.deletedDocuments).toBe(7);
    expect(refused.deletes).toBe(0);
    expect(await guides.harness.snapshot()).toEqual(before);

    for (const name of NAMES.slice(7)) await rm(join(guides.folder, name));
    const empty = await guides.run({ pruneOnly: true, maxPruneRatio: 1 });
    expect(empty.pruneRefused?.reason).toMatch(/^the source listed no document/);
    expect(await guides.harness.snapshot()).toEqual(before);

    const forced = await guides.run({ pruneOnly: true, forcePrune: true });
    expect(forced.deletes).toBeGreaterThan(0);
    expect((await guides.harness.snapshot()).size).toBe(0);
  });
});
