import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCrossEncoderReranker, LocalOnnxEmbedder } from '@rag/core/embedded';
import { postJson, startTestStack, type TestStack } from './test-stack.ts';

const modelsFolder = new URL('../../../packages/core/test/fixtures/models/', import.meta.url).pathname;

/**
 * The dense + rerank path with real ONNX Runtime on tiny random-weight models: their rankings are
 * meaningless, so this checks the plumbing (vectors stored, fusion, rerank scores), not quality.
 */
describe('hybrid search with a local embedder and cross-encoder', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({
      embedder: new LocalOnnxEmbedder({ model: `${modelsFolder}tiny-random-bert`, allowRemote: false }),
      reranker: new LocalCrossEncoderReranker({ model: `${modelsFolder}tiny-random-bert-reranker`, allowRemote: false }),
    });
  });

  afterAll(async () => {
    await stack.close();
  });

  it('reranks the fused candidates: score is the rerank probability, fusion_score the RRF score', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/search', { query: 'restore a snapshot', k: 2 });
    expect(status).toBe(200);
    expect(body.results).toHaveLength(2);
    for (const result of body.results) {
      expect(result.score).toBeGreaterThan(0);
      expect(result.score).toBeLessThan(1);
      // RRF with k = 2 over two legs: at most 1/2 + 1/2.
      expect(result.fusion_score).toBeGreaterThan(0);
      expect(result.fusion_score).toBeLessThanOrEqual(1);
    }
    expect(body.results[0].score).toBeGreaterThanOrEqual(body.results[1].score);
  });

  it('finds every chunk through the dense leg, even without a shared word', async () => {
    const { body } = await postJson(stack.baseUrl, '/search', { query: 'zzz qqq', k: 5 });
    expect(body.results).toHaveLength(5);
  });
});
