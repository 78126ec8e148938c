/**
 * QDRANT_QUANTIZATION=int8 on Qdrant's engine: QdrantStore creates the collection with the body
 * qdrant-vector-storage.test.ts asserts (the dense vector `on_disk`, scalar int8 `quantization_config`), Qdrant
 * Edge (../real/qdrant-edge.ts) builds it with those settings (its oracle maps each field onto Edge's
 * EdgeVectorParams and ScalarQuantizationConfig and refuses an unknown one), and dense search over a real corpus
 * (the vllm-gke docs, the Model2Vec test model) answers as from an unquantized collection: the int8 copy picks the
 * candidates and the originals rescore them (https://qdrant.tech/documentation/guides/quantization/#searching-with-quantization).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import type { IndexedChunk, SearchHit } from '../../src/domain.ts';
import { Model2VecEmbedder } from '../../src/embedders/model2vec.ts';
import { vectorizeChunks } from '../../src/pipeline/index-document.ts';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import { realComponentSkipReason, repositoryRoot, venvPython } from '../real/real-components.ts';
import { startQdrantEdge, type QdrantEdgeServer } from '../real/qdrant-edge.ts';

const SUITE = 'qdrant-vector-storage.real.test.ts';
const shared = join(repositoryRoot, '..', 'shared');
const CORPUS = join(shared, 'corpora', 'vllm-gke');
const FILES = ['README.md', 'docs/rag-architecture.md', 'docs/implementation-guide.md', 'docs/cost-checkpoint.md'];
const MODEL = join(shared, 'models', 'model2vec-test-bge-base-vq');
const python = venvPython('qdrant-edge');
const skipReason = realComponentSkipReason(
  SUITE,
  !python ? 'the qdrant-edge Python environment (scripts/python-env.sh qdrant-edge) is missing' : [CORPUS, MODEL].find((path) => !existsSync(path))?.replace(/^/, 'missing ') ?? undefined,
);
const QUESTIONS = ['how long does the GPU take to wake up', 'which vector database was chosen', 'how are passages split', 'what does the system pool cost per month', 'which secret holds the API key'];

/** Qdrant scores in f32. */
const sameScore = (a: number, b: number) => Math.abs(a - b) <= 1e-5;
const show = (hits: SearchHit[]) => hits.map((hit) => `${hit.source}#${hit.chunkIndex} ${hit.score.toFixed(6)}`).join('\n');

describe.skipIf(skipReason !== undefined)('int8 scalar quantization with on-disk originals, on Qdrant\'s engine (Qdrant Edge)', () => {
  let plainEdge: QdrantEdgeServer;
  let quantizedEdge: QdrantEdgeServer;
  let plain: QdrantStore;
  let quantized: QdrantStore;
  let embedder: Model2VecEmbedder;

  beforeAll(async () => {
    [plainEdge, quantizedEdge] = await Promise.all([startQdrantEdge(python!), startQdrantEdge(python!)]);
    embedder = new Model2VecEmbedder({ model: MODEL });
    const lock = await embedder.describe();
    plain = new QdrantStore({ url: plainEdge.url, collection: 'docs', retries: 0 });
    quantized = new QdrantStore({ url: quantizedEdge.url, collection: 'docs', retries: 0, vectorStorage: { quantization: 'int8' } });
    const chunks: IndexedChunk[] = [];
    for (const [position, file] of FILES.entries()) {
      const pieces = chunkMarkdown(await readFile(join(CORPUS, file), 'utf8'), file, { chunkSize: 1200, chunkOverlap: 200 });
      chunks.push(...(await vectorizeChunks(pieces, { contentHash: `hash-${position}`, groups: [] }, embedder, 64, () => undefined)));
    }
    for (const store of [plain, quantized]) {
      await store.open(lock);
      await store.upsert(chunks);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all([plainEdge?.close(), quantizedEdge?.close()]);
  });

  it('is created by Qdrant\'s engine from the body QdrantStore sends', () => {
    const create = quantizedEdge.requests.find((request) => request.method === 'PUT' && request.path === '/collections/docs')!;
    expect((create.body as { vectors: unknown }).vectors).toMatchObject({ dense: { on_disk: true, quantization_config: { scalar: { type: 'int8', quantile: 0.99, always_ram: true } } } });
  });

  it('answers dense searches with the chunks and scores of the unquantized collection', async () => {
    for (const question of QUESTIONS) {
      const query = { dense: await embedder.embedQuery(question), sparse: { indices: [], values: [] }, limit: 10, prefetchLimit: 20, visibleGroups: [] };
      const [expected, actual] = await Promise.all([plain.search(query), quantized.search(query)]);
      expect(actual.length, question).toBe(expected.length);
      const agree = expected.every((hit, index) => hit.id === actual[index]!.id && sameScore(hit.score, actual[index]!.score));
      expect(agree ? '' : `${question}\nunquantized:\n${show(expected)}\nint8:\n${show(actual)}`).toBe('');
    }
  });
});
