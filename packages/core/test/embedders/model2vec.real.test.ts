/**
 * Model2VecEmbedder on real weights: a static model that `pnpm models:fetch` distils from
 * sentence-transformers/all-MiniLM-L6-v2 with model2vec's distill() (256 dimensions, float16 embeddings, the
 * library's default). The reference vectors are model2vec's StaticModel.encode on the same folder
 * (scripts/models/reference.py).
 */
import { describe, expect, it } from 'vitest';
import { Model2VecEmbedder } from '../../src/embedders/model2vec.ts';
import { fetchedModel, realComponentSkipReason } from '../real/real-components.ts';
import { cosine, label, readReference } from './reference-embeddings.ts';

const MODEL = 'minilm-l6-static';
const folder = fetchedModel(MODEL);
const skipReason = realComponentSkipReason('model2vec.real.test.ts', folder ? undefined : `.cache/models/${MODEL} is missing`);

describe.skipIf(skipReason !== undefined)(`Model2VecEmbedder on the real ${MODEL}`, () => {
  const reference = folder ? readReference(folder) : { producer: '', texts: [], embeddings: [] };
  const embedder = new Model2VecEmbedder({ model: folder ?? '' });

  it('has the 256 dimensions it was distilled to', async () => {
    expect(reference.producer).toBe('model2vec');
    expect(await embedder.describe()).toEqual({ model: folder, dimension: 256 });
  });

  it('matches model2vec on every reference text (cosine ≥ 0.999)', async () => {
    const vectors = await embedder.embedDocuments(reference.texts);
    vectors.forEach((vector, i) => expect(cosine(vector, reference.embeddings[i]!), label(reference.texts[i]!)).toBeGreaterThanOrEqual(0.999));
  });

  it('puts a paraphrase closer than an unrelated sentence', async () => {
    const [question, paraphrase, unrelated] = await embedder.embedDocuments(reference.texts.slice(0, 3));
    expect(cosine(question!, paraphrase!)).toBeGreaterThan(cosine(question!, unrelated!) + 0.4);
  });
});
