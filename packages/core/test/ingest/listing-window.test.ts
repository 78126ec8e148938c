/**
 * A long listing is read only as fast as documents are synced: what a run holds of it is a window of
 * documents plus the uris seen (for pruning), not the whole listing queued at once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentSource, SourceDocument } from '../../src/ingestion.ts';
import { startHarness, type Harness } from './ingest-harness.ts';

let harness: Harness;

beforeEach(async () => {
  harness = await startHarness();
});

afterEach(() => harness.close());

describe('a long listing', () => {
  it('is read only as fast as documents are synced, a few documents ahead', async () => {
    const concurrency = 2;
    let listed = 0;
    let read = 0;
    let mostAhead = 0;
    const source: DocumentSource = {
      description: 'a listing of 300 documents',
      async *list() {
        for (let index = 0; index < 300; index += 1) {
          listed += 1;
          mostAhead = Math.max(mostAhead, listed - read);
          const document: SourceDocument = {
            uri: `notes-${index}.md`,
            groups: [],
            read: async () => {
              await new Promise((resolve) => setTimeout(resolve, 1));
              read += 1;
              return Buffer.from(`# Note ${index}\n\nThe note number ${index}.\n`);
            },
          };
          yield document;
        }
      },
    };

    const summary = await harness.run(source, { concurrency, writeBatchPoints: 512 });

    expect(summary).toMatchObject({ files: 300, errors: 0 });
    expect(summary.upserts).toBe(300);
    // Listed but not yet read: those being read, those queued for a worker, and the one the listing just gave.
    expect(mostAhead).toBeLessThanOrEqual(2 * concurrency + 1);
  });
});
