/**
 * FUSION_WEIGHTS and RRF_K reach the store: a Retriever over a real embedded store (LanceDB on disk) ranks
 * the same chunks differently as its fusion leans on the dense or on the sparse leg, with the scores of
 * Qdrant's weighted RRF (lib/segment/src/common/reciprocal_rank_fusion.rs: 1 / ((position + 1) / weight + k - 1)).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import type { IndexedChunk } from '../../src/domain.ts';
import type { Embedder } from '../../src/embedders/embedder.ts';
import type { RrfParameters } from '../../src/fusion/rrf.ts';
import { PUBLIC_ONLY } from '../../src/access/groups.ts';
import { Retriever } from '../../src/pipeline/retrieve.ts';
import { encodeDocument } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { Telemetry } from '../../src/telemetry.ts';

/** The query's vector points at `dense.md`; its words are only in `sparse.md`. */
const QUERY = 'rotate the signing keys';
const embedder: Embedder = {
  modelId: 'two-axis-test-model',
  describe: async () => ({ model: 'two-axis-test-model', dimension: 2 }),
  embedDocuments: async (texts) => texts.map(() => [1, 0]),
  embedQuery: async () => [1, 0],
};

function chunk(source: string, text: string, dense: number[]): IndexedChunk {
  return { id: chunkId(source, 0), source, headingPath: '', chunkIndex: 0, text, contentHash: source, sourceVersion: 'v1', groups: [], dense, sparse: encodeDocument(text), ingestedAt: '2026-01-01T00:00:00.000Z' };
}

let dataDir: string;
let store: LanceDbStore;
const telemetry = new Telemetry();

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-fusion-'));
  store = new LanceDbStore({ dataDir, collection: 'docs' });
  await store.open(await embedder.describe());
  // 25 fillers sit between the query's vector and sparse.md's, so sparse.md is outside the dense leg's 20.
  const fillers = Array.from({ length: 25 }, (_, n) => chunk(`filler-${String(n).padStart(2, '0')}.md`, `holiday calendar note ${n}`, [1, 0.1 * (n + 1)]));
  await store.upsert([chunk('dense.md', 'credentials are renewed every quarter', [1, 0]), chunk('sparse.md', 'rotate the signing keys with the CLI', [-1, 0]), ...fillers]);
});

afterAll(async () => {
  await store.close();
  await telemetry.shutdown();
  await rm(dataDir, { recursive: true, force: true });
});

async function ranking(fusion: RrfParameters | undefined) {
  const retriever = new Retriever({ store, embedder, rerankCandidates: 50, telemetry, fusion });
  return (await retriever.search(QUERY, 2, PUBLIC_ONLY)).map((hit) => ({ source: hit.source, score: hit.score }));
}

describe('Retriever fusion', () => {
  it('without settings fuses with plain RRF: first in one leg each, the tie goes by id', async () => {
    const plain = await ranking(undefined);
    expect(plain.map((hit) => hit.score)).toEqual([0.5, 0.5]);
    expect(plain.map((hit) => hit.source).sort()).toEqual(['dense.md', 'sparse.md']);
  });

  it('a heavier dense leg puts the dense match first, a heavier sparse leg the sparse one, with Qdrant scores', async () => {
    const denseFirst = await ranking({ k: 2, weights: { dense: 3, sparse: 1 } });
    // dense.md: first in the dense leg at weight 3: 1/(1/3 + 1) = 0.75; the first filler, second there: 1/(2/3 + 1) = 0.6;
    // in f32 as the server computes ((p + 1)/w + k) - 1: 1/3 + 2 → 2.3333333, - 1 → 1.3333333, 1/x → 0.75000006; likewise 0.59999996.
    expect(denseFirst).toEqual([
      { source: 'dense.md', score: Math.fround(0.75000006) },
      { source: 'filler-00.md', score: Math.fround(0.59999996) },
    ]);
    const sparseFirst = await ranking({ k: 2, weights: { dense: 1, sparse: 3 } });
    expect(sparseFirst).toEqual([
      { source: 'sparse.md', score: Math.fround(0.75000006) },
      { source: 'dense.md', score: 0.5 },
    ]);
  });

  it('passes RRF_K: k = 60 scores the top of a leg 1/60', async () => {
    const [top] = await ranking({ k: 60, weights: { dense: 1, sparse: 0 } });
    expect(top).toEqual({ source: 'dense.md', score: Math.fround(1 / 60) });
  });
});
