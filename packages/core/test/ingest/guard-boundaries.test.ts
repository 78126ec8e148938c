/**
 * The exact edges of what stops or allows pruning, and what a dry run does: each test here was written
 * against a mutation of the code that left every other test green (see each test's comment).
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RagError } from '../../src/index.ts';
import { guide } from './fixture-folder.ts';
import { CountingEmbedder, useIndexedGuides } from './ingest-harness.ts';

const GUIDES = ['alpha.md', 'bravo.md', 'charlie.md', 'delta.md'];

const guides = useIndexedGuides(GUIDES, 'rag-guard-edges-');
const run = guides.run;

describe('the prune guard at exactly INGEST_MAX_PRUNE_RATIO', () => {
  // Refused past the share, not at it (docs/ingestion.md: "lost more than INGEST_MAX_PRUNE_RATIO").
  // Mutation caught: `share <= maxRatio` → `share < maxRatio` (exactly half refused).
  it('prunes exactly half of the indexed documents at 0.5', async () => {
    await rm(join(guides.folder, 'charlie.md'));
    await rm(join(guides.folder, 'delta.md'));

    const summary = await run({ maxPruneRatio: 0.5 });

    expect(summary.pruneRefused).toBeUndefined();
    expect([...(await guides.harness.snapshot()).keys()]).toEqual(['alpha.md', 'bravo.md']);
  });

  // Mutation caught: `share <= maxRatio` → `share <= maxRatio + 0.01` (a share just past the limit let through).
  it('refuses the same half when the limit is a hair below it, with its digits', async () => {
    await rm(join(guides.folder, 'charlie.md'));
    await rm(join(guides.folder, 'delta.md'));

    const summary = await run({ maxPruneRatio: 0.499 });

    expect(summary.pruneRefused?.reason).toContain('(50 % > INGEST_MAX_PRUNE_RATIO 49.9 %;');
    expect([...(await guides.harness.snapshot()).keys()]).toEqual(GUIDES);
  });
});

/** Fails (as an embedding server would) for any text of a document that says "poison". */
class PoisonedEmbedder extends CountingEmbedder {
  override async embedDocuments(texts: string[]): Promise<number[][]> {
    if (texts.some((text) => text.includes('poison'))) throw new RagError('RAG_EMBED_UNAVAILABLE', '(simulated outage)');
    return super.embedDocuments(texts);
  }
}

describe('a failed write', () => {
  // A document that failed to be written may be the new name of a deleted one: one such failure is enough.
  // Mutation caught: `writeFailures > 0` → `writeFailures > 1` in prune.ts.
  it('blocks pruning from the first one', async () => {
    await rm(join(guides.folder, 'delta.md'));
    await writeFile(join(guides.folder, 'bravo.md'), guide(2, 'poison'));

    const summary = await run({ embedder: new PoisonedEmbedder() });

    expect(summary.failures.map((failure) => [failure.uri, failure.code])).toEqual([['bravo.md', 'RAG_EMBED_UNAVAILABLE']]);
    expect(guides.harness.store.deletedPoints).toBe(0);
    expect([...(await guides.harness.snapshot()).keys()]).toEqual(GUIDES);
  });
});

describe('a run stopped by its signal', () => {
  // A run that did not see the whole listing cannot tell a deleted document from one it did not reach:
  // no prune, and no refusal either (it would blame the source for the stop).
  // Mutation caught: the `if (options.signal?.aborted) return interrupted(run);` before pruning removed.
  it('neither refuses nor plans a prune, even when what it listed would be refused', async () => {
    const stop = new AbortController();
    stop.abort(new Error('stopped by SIGTERM'));
    const plannedPrunes: string[] = [];

    const stopped = await run({ signal: stop.signal });
    const stoppedDryRun = await run({ signal: stop.signal, dryRun: true, onPlannedPrune: (uri) => plannedPrunes.push(uri) });

    expect(stopped.interrupted).toBe(true);
    expect(stopped.pruneRefused).toBeUndefined();
    expect(stoppedDryRun.pruneRefused).toBeUndefined();
    expect(plannedPrunes).toEqual([]);
    expect(guides.harness.store.deletedPoints).toBe(0);
    expect([...(await guides.harness.snapshot()).keys()]).toEqual(GUIDES);
  });
});

describe('a dry run over an indexed guides.folder', () => {
  // A dry run converts and chunks every document (docs/ingestion.md, --dry-run): it never skips an
  // unchanged one by its version, and never writes a change of groups.
  // Mutation caught: `previous !== undefined && !options.dryRun` → `previous !== undefined` (a dry run comparing versions).
  it('lists every document with the chunks it has, unchanged ones included, and writes nothing', async () => {
    const indexed = await guides.harness.snapshot();
    await writeFile(join(guides.folder, '.rag-access.yaml'), 'rules:\n  - path: "alpha.md"\n    groups: [hr]\n');
    const planned = new Map<string, number>();

    const summary = await run({ dryRun: true, onPlanned: (uri, chunks) => planned.set(uri, chunks) });

    expect(planned).toEqual(new Map([...indexed].map(([uri, document]) => [uri, document.chunkIds.length])));
    expect(summary.unchanged).toBe(0);
    expect(guides.harness.store.upsertedPoints + guides.harness.store.deletedPoints + guides.harness.store.groupUpdates.length).toBe(0);
    expect(await guides.harness.snapshot()).toEqual(indexed);
  });
});
