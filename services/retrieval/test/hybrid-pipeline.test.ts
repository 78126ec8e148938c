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
  const reranker = new LocalCrossEncoderReranker({ model: `${modelsFolder}tiny-random-bert-reranker`, allowRemote: false });

  beforeAll(async () => {
    stack = await startTestStack({
      embedder: new LocalOnnxEmbedder({ model: `${modelsFolder}tiny-random-bert`, allowRemote: false }),
      reranker,
    });
  });

  afterAll(async () => {
    await stack.close();
  });

  it('reranks the fused candidates: score is the rerank probability, fusion_score the RRF score', async () => {
    const query = 'restore a snapshot';
    // k = 50 is not below the candidate count, so nothing is reranked: the fused ranking, as the reranker receives it.
    const fused = await postJson(stack.baseUrl, '/search', { query, k: 50 });
    expect(fused.body.reranked).toBe(false);
    const candidates: Array<{ text: string; score: number; fusion_score: number }> = fused.body.results;
    expect(candidates.length).toBeGreaterThan(2);
    for (const candidate of candidates) expect(candidate.score).toBe(candidate.fusion_score);
    const fusionOf = new Map(candidates.map((candidate) => [candidate.text, candidate.fusion_score]));
    // What the cross-encoder itself says of each candidate, asked directly.
    const rerankOf = new Map((await reranker.rerank(query, candidates.map((c) => c.text))).map(({ index, score }) => [candidates[index]!.text, score]));
    const expectedTop = [...rerankOf.entries()].sort((a, b) => b[1] - a[1]).slice(0, 2);
    // This (random-weight) cross-encoder reorders these candidates, so the fused order cannot pass for its order.
    expect(expectedTop.map(([text]) => text)).not.toEqual(candidates.slice(0, 2).map((c) => c.text));

    const { status, body } = await postJson(stack.baseUrl, '/search', { query, k: 2 });
    expect(status).toBe(200);
    expect(body.reranked).toBe(true);
    // The two best by rerank probability, in that order, each scored by the reranker with its RRF score kept.
    expect(body.results.map((result: { text: string }) => result.text)).toEqual(expectedTop.map(([text]) => text));
    for (const result of body.results) {
      expect(result.score).toBeCloseTo(rerankOf.get(result.text)!, 6);
      expect(result.fusion_score).toBe(fusionOf.get(result.text));
      expect(result.score).not.toBeCloseTo(result.fusion_score, 3);
      // RRF with k = 2 over two legs: at most 1/2 + 1/2.
      expect(result.fusion_score).toBeGreaterThan(0);
      expect(result.fusion_score).toBeLessThanOrEqual(1);
    }
  });

  it('finds every chunk through the dense leg, even without a shared word', async () => {
    const { body } = await postJson(stack.baseUrl, '/search', { query: 'zzz qqq', k: 5 });
    expect(body.results).toHaveLength(5);
  });
});
