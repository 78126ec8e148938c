/**
 * Weighted RRF (FUSION_WEIGHTS, RRF_K) scores as Qdrant does, checked against Qdrant's own engine: the same
 * chunks of real documentation go into LanceDbStore and, through QdrantStore (which sends `{rrf: {k, weights}}`),
 * into Qdrant Edge (../real/qdrant-edge.ts). For each fusion setting and question, both return the same chunks
 * in the same order with the same scores. Qdrant's formula:
 * https://github.com/qdrant/qdrant/blob/master/lib/segment/src/common/reciprocal_rank_fusion.rs
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import type { IndexedChunk, SearchHit } from '../../src/domain.ts';
import { Model2VecEmbedder } from '../../src/embedders/model2vec.ts';
import type { RrfParameters } from '../../src/fusion/rrf.ts';
import { vectorizeChunks } from '../../src/pipeline/index-document.ts';
import { encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import type { VectorStore } from '../../src/stores/vector-store.ts';
import { realComponentSkipReason, repositoryRoot, venvPython } from '../real/real-components.ts';
import { startQdrantEdge, type QdrantEdgeServer } from '../real/qdrant-edge.ts';

const SUITE = 'weighted-rrf-edge.real.test.ts';
const shared = join(repositoryRoot, '..', 'shared');
const CORPUS = join(shared, 'corpora', 'vllm-gke');
const FILES = ['README.md', 'docs/semantic-routing-walkthrough.md', 'docs/rag-architecture.md', 'docs/implementation-guide.md', 'docs/cost-checkpoint.md'];
const MODEL = join(shared, 'models', 'model2vec-test-bge-base-vq');
const python = venvPython('qdrant-edge');
const skipReason = realComponentSkipReason(
  SUITE,
  !python ? 'the qdrant-edge Python environment (scripts/python-env.sh qdrant-edge) is missing' : [CORPUS, MODEL].find((path) => !existsSync(path))?.replace(/^/, 'missing ') ?? undefined,
);

const QUESTIONS = [
  'how long does the GPU take to wake up',
  'which secret holds the API key',
  'why is the gateway ClusterIP only',
  'invalid_upstream_json',
  'what does the system pool cost per month',
  'which vector database was chosen',
  'how are passages split',
  'scale down after idle',
];
const SETTINGS: RrfParameters[] = [
  { k: 2, weights: { dense: 3, sparse: 1 } },
  { k: 2, weights: { dense: 1, sparse: 2.5 } },
  { k: 10, weights: { dense: 0.5, sparse: 1 } },
  { k: 60, weights: { dense: 1, sparse: 1 } },
];

/** Qdrant scores in f32: the fused scores are equal to its rounding. */
const sameScore = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a));
const show = (hits: SearchHit[]) => hits.map((hit) => `${hit.source}#${hit.chunkIndex} ${hit.score.toFixed(7)}`);

describe.skipIf(skipReason !== undefined)('weighted RRF in the embedded store against Qdrant\'s engine (Qdrant Edge)', () => {
  let edge: QdrantEdgeServer;
  let dataDir = '';
  let embedded: LanceDbStore;
  let qdrant: QdrantStore;
  let embedder: Model2VecEmbedder;

  beforeAll(async () => {
    edge = await startQdrantEdge(python!);
    dataDir = await mkdtemp(join(tmpdir(), 'rag-weighted-rrf-'));
    embedder = new Model2VecEmbedder({ model: MODEL });
    const lock = await embedder.describe();
    embedded = new LanceDbStore({ dataDir, collection: 'rrf' });
    qdrant = new QdrantStore({ url: edge.url, collection: 'rrf', minBackoffMs: 10, retries: 0 });
    const chunks: IndexedChunk[] = [];
    for (const [position, file] of FILES.entries()) {
      const pieces = chunkMarkdown(await readFile(join(CORPUS, file), 'utf8'), file, { chunkSize: 1200, chunkOverlap: 200 });
      chunks.push(...(await vectorizeChunks(pieces, { contentHash: `hash-${position}`, groups: [] }, embedder, 64, () => undefined)));
    }
    for (const store of [embedded, qdrant] as VectorStore[]) {
      await store.open(lock);
      await store.upsert(chunks);
    }
  });

  afterAll(async () => {
    await embedded?.close();
    await edge?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it.each(SETTINGS)('fuses alike with k %# (%o)', async (fusion) => {
    for (const question of QUESTIONS) {
      const query = { dense: await embedder.embedQuery(question), sparse: encodeQuery(question), limit: 10, prefetchLimit: 20, visibleGroups: [], fusion };
      const [ours, theirs] = await Promise.all([embedded.search(query), qdrant.search(query)]);
      expect(ours.length, question).toBe(theirs.length);
      const scoresAgree = ours.every((hit, i) => sameScore(hit.score, theirs[i]!.score));
      expect(scoresAgree ? '' : `${question}\nembedded:\n${show(ours).join('\n')}\nqdrant:\n${show(theirs).join('\n')}`).toBe('');
      // The same chunks above the last score (Qdrant leaves ties in no particular order, so a tie cut by the limit may differ).
      const last = ours.at(-1)?.score ?? 0;
      const above = (hits: SearchHit[]) => new Set(hits.filter((hit) => hit.score > last && !sameScore(hit.score, last)).map((hit) => hit.id));
      expect(above(ours), question).toEqual(above(theirs));
    }
  });
});
