import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import { encodeDocument, type IndexedChunk } from '../../src/index.ts';
import { LanceDbStore } from '../../src/embedded.ts';

function chunk(index: number, contentHash: string): IndexedChunk {
  const text = `guide.md\n\nchunk ${index} of ${contentHash}`;
  return { id: chunkId('guide.md', index), source: 'guide.md', headingPath: '', chunkIndex: index, text, contentHash, sourceVersion: contentHash, groups: [], sparse: encodeDocument(text), ingestedAt: '2026-01-01T00:00:00Z' };
}

it('reports no version for a document whose chunks are of two versions, so that the next run re-syncs it', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rag-mixed-'));
  const store = new LanceDbStore({ dataDir, collection: 'test' });
  try {
    await store.open(null);
    await store.upsert([chunk(0, 'v1'), chunk(1, 'v1'), chunk(2, 'v1')]);
    // A run that stopped after upserting the shorter v2 and before deleting chunk 2 of v1.
    await store.upsert([chunk(0, 'v2'), chunk(1, 'v2')]);

    const [document] = await store.listDocuments();

    expect(document).toMatchObject({ source: 'guide.md', contentHash: '', sourceVersion: undefined });
    expect(document!.chunkIds).toHaveLength(3);
  } finally {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
