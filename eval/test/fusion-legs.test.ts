/**
 * Tuning re-fuses each query's two legs instead of searching again: that is only honest if re-fusing gives
 * exactly what the store returns with the same parameters. Checked on a real embedded store (LanceDB).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeDocument, encodeQuery, PUBLIC_ONLY, type Embedder, type IndexedChunk, type RrfParameters } from '@rag/core';
import { LanceDbStore } from '@rag/core/embedded';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryLegs } from '../src/fusion-legs.ts';

const WORDS = ['backup', 'restore', 'quota', 'alert', 'deploy', 'rollback', 'token', 'cache', 'index', 'shard'];

/** A deterministic 3-dimension vector from the text's length and letters: enough for distinct cosine rankings. */
function vectorOf(text: string): number[] {
  let a = 0;
  for (const char of text) a = (a * 31 + char.charCodeAt(0)) % 997;
  return [Math.cos(a), Math.sin(a), (text.length % 7) / 7 - 0.5];
}

const embedder: Embedder = {
  modelId: 'letters-test-model',
  describe: async () => ({ model: 'letters-test-model', dimension: 3 }),
  embedDocuments: async (texts) => texts.map(vectorOf),
  embedQuery: async (text) => vectorOf(text),
};

let dataDir: string;
let store: LanceDbStore;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-legs-'));
  store = new LanceDbStore({ dataDir, collection: 'docs' });
  await store.open(await embedder.describe());
  const chunks: IndexedChunk[] = Array.from({ length: 60 }, (_, n) => {
    const text = `${WORDS[n % 10]} ${WORDS[(n * 3) % 10]} note ${n} ${'x'.repeat(n % 5)}`;
    const source = `doc-${n}.md`;
    return { id: `00000000-0000-5000-8000-${String(n).padStart(12, '0')}`, source, headingPath: '', chunkIndex: 0, text, contentHash: source, sourceVersion: 'v1', groups: [], dense: vectorOf(text), sparse: encodeDocument(text), ingestedAt: '2026-01-01T00:00:00.000Z' };
  });
  await store.upsert(chunks);
});

afterAll(async () => {
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

const PARAMETERS: RrfParameters[] = [
  { k: 2, weights: { dense: 1, sparse: 1 } },
  { k: 2, weights: { dense: 3, sparse: 1 } },
  { k: 10, weights: { dense: 1, sparse: 2 } },
  { k: 60, weights: { dense: 0.5, sparse: 1 } },
];

describe('QueryLegs', () => {
  it.each(['backup restore', 'quota alert deploy', 'token cache shard index'])('re-fused legs equal the store’s own fusion for "%s"', async (text) => {
    const legs = await QueryLegs.fetch(store, embedder, text, 10);
    for (const fusion of PARAMETERS) {
      const fromStore = await store.search({ dense: await embedder.embedQuery(text), sparse: encodeQuery(text), limit: 10, prefetchLimit: 20, visibleGroups: PUBLIC_ONLY, fusion });
      expect(legs.fused(fusion).map((passage) => [passage.source, passage.score])).toEqual(fromStore.map((hit) => [hit.source, hit.score]));
    }
  });
});
