import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalCrossEncoderReranker } from '../../src/rerankers/local-cross-encoder.ts';

const MODEL_DIR = fileURLToPath(new URL('../fixtures/models/tiny-random-bert-reranker', import.meta.url));
const QUERY = 'what does the cat eat';
const TEXTS = [
  'the cat eats fish',
  'dogs bark at night',
  'a much longer passage about many different things that has to be padded when batched with short ones',
  'cat food',
  'weather today',
];

const reranker = new LocalCrossEncoderReranker({ model: MODEL_DIR });
afterAll(() => reranker.dispose());

async function scoreAlone(text: string): Promise<number> {
  const [only] = await reranker.rerank(QUERY, [text]);
  return only!.score;
}

describe('LocalCrossEncoderReranker', () => {
  it('returns one score per text, best first, with the original indices', async () => {
    const results = await reranker.rerank(QUERY, TEXTS);
    expect(results.map((r) => r.index).sort()).toEqual([0, 1, 2, 3, 4]);
    const scores = results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const score of scores) {
      expect(score).toBeGreaterThan(0);
      expect(score).toBeLessThan(1);
    }
  });

  it('scores each pair as if it were scored alone (padding and batching do not matter)', async () => {
    const results = await reranker.rerank(QUERY, TEXTS);
    for (const { index, score } of results) {
      expect(score).toBeCloseTo(await scoreAlone(TEXTS[index]!), 5);
    }
  });

  it('gives the same scores whatever the batch size', async () => {
    const small = new LocalCrossEncoderReranker({ model: MODEL_DIR, batchSize: 2 });
    const inBatchesOfTwo = await small.rerank(QUERY, TEXTS);
    const inOneBatch = await reranker.rerank(QUERY, TEXTS);
    expect(inBatchesOfTwo.map((r) => r.index)).toEqual(inOneBatch.map((r) => r.index));
    inOneBatch.forEach((r, i) => expect(r.score).toBeCloseTo(inBatchesOfTwo[i]!.score, 5));
    await small.dispose();
  });

  it('depends on the query: the pair is scored jointly', async () => {
    const [a] = await reranker.rerank(QUERY, [TEXTS[0]!]);
    const [b] = await reranker.rerank('something else entirely', [TEXTS[0]!]);
    expect(Math.abs(a!.score - b!.score)).toBeGreaterThan(1e-4);
  });

  it('is deterministic', async () => {
    expect(await reranker.rerank(QUERY, TEXTS)).toEqual(await reranker.rerank(QUERY, TEXTS));
  });

  it('truncates passages longer than the model accepts instead of failing', async () => {
    const long = Array.from({ length: 400 }, () => 'cat').join(' ');
    const results = await reranker.rerank(QUERY, [long, TEXTS[0]!]);
    expect(results).toHaveLength(2);
    for (const r of results) expect(Number.isFinite(r.score)).toBe(true);
  });

  it('returns nothing for no texts', async () => {
    expect(await reranker.rerank(QUERY, [])).toEqual([]);
  });

  it('stops when the signal is aborted', async () => {
    await expect(reranker.rerank(QUERY, TEXTS, AbortSignal.abort())).rejects.toThrow();
  });

  it('says when the model directory does not exist', async () => {
    const missing = new LocalCrossEncoderReranker({ model: '/nonexistent/reranker-model' });
    await expect(missing.rerank(QUERY, TEXTS)).rejects.toThrow(/Model directory "\/nonexistent\/reranker-model" does not exist/);
  });

  it('says a hub model is not cached when downloads are disabled', async () => {
    const offline = new LocalCrossEncoderReranker({ model: 'nobody/no-such-reranker', cacheDir: '/nonexistent-cache', allowRemote: false });
    await expect(offline.rerank(QUERY, TEXTS)).rejects.toThrow(/"nobody\/no-such-reranker" is not in the cache directory.*local directory/s);
  });
});
