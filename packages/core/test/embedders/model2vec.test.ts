import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Model2VecEmbedder, parseSafetensors } from '../../src/embedders/model2vec.ts';

const MODEL_DIR = fileURLToPath(new URL('../fixtures/models/model2vec-test-bge-base-vq', import.meta.url));
const embedder = new Model2VecEmbedder({ model: MODEL_DIR });

function cosine(a: number[], b: number[]): number {
  return a.reduce((sum, value, i) => sum + value * (b[i] ?? Number.NaN), 0);
}

/** A one-tensor safetensors file: 8-byte little-endian header length, JSON header, data. */
function safetensorsFile(dtype: string, shape: number[], data: Buffer): Buffer {
  const header = Buffer.from(JSON.stringify({ embeddings: { dtype, shape, data_offsets: [0, data.length] } }));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([length, header, data]);
}

describe('Model2VecEmbedder', () => {
  it('reads the safetensors tensors with their shapes and types', () => {
    const tensors = parseSafetensors(readFileSync(`${MODEL_DIR}/model.safetensors`));
    expect(tensors.get('embeddings')?.shape).toEqual([128, 64]);
    expect(tensors.get('embeddings')?.data).toBeInstanceOf(Float32Array);
    expect(tensors.get('weights')?.data).toBeInstanceOf(Float64Array);
    expect(tensors.get('mapping')?.data).toBeInstanceOf(Int32Array);
    expect(tensors.get('mapping')?.data.length).toBe(29524);
  });

  it('widens float16 tensors, as model2vec distill() saves them, to float32', () => {
    // binary16 bit patterns: 1, -2, 0.5, the largest finite 65504, the smallest subnormal 2^-24, -0, +Infinity.
    const halves = Uint16Array.of(0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x8000, 0x7c00);
    const tensor = parseSafetensors(safetensorsFile('F16', [7, 1], Buffer.from(halves.buffer))).get('embeddings');
    expect(tensor?.data).toBeInstanceOf(Float32Array);
    expect(Array.from(tensor!.data)).toEqual([1, -2, 0.5, 65504, 2 ** -24, -0, Number.POSITIVE_INFINITY]);
  });

  it('describes the model with its dimension', async () => {
    expect(await embedder.describe()).toEqual({ model: MODEL_DIR, dimension: 64 });
  });

  it('matches the Python model2vec library on "hello" x 1000 (truncated to 512 tokens)', async () => {
    const expected = (JSON.parse(readFileSync(`${MODEL_DIR}/expected_hello1000.json`, 'utf8')) as number[][])[0]!;
    const vector = await embedder.embedQuery(Array(1000).fill('hello').join(' '));
    expect(vector).toHaveLength(64);
    vector.forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 6));
  });

  it('returns unit vectors, one per text, deterministically', async () => {
    const texts = ['Hello, World!', 'Café naïve', 'zzqxj', ''];
    const vectors = await embedder.embedDocuments(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const vector of vectors.slice(0, 3)) expect(Math.hypot(...vector)).toBeCloseTo(1, 6);
    expect(vectors[3]!.every((value) => value === 0)).toBe(true);
    expect(await embedder.embedDocuments(texts)).toEqual(vectors);
  });

  it('embeds a text the same alone and in a batch', async () => {
    const [alone] = await embedder.embedDocuments(['reset my password']);
    const [batched] = await embedder.embedDocuments(['reset my password', 'a much longer text about something else entirely']);
    expect(batched).toEqual(alone);
  });

  it('scores a paraphrase above unrelated text (weak but real weights)', async () => {
    const [query, paraphrase, unrelated] = await embedder.embedDocuments([
      'How do I reset my password?',
      'Steps to change the account password',
      'The weather in Paris is sunny',
    ]);
    expect(cosine(query!, paraphrase!)).toBeGreaterThan(cosine(query!, unrelated!));
  });

  it('says which files a model directory lacks', async () => {
    const missing = new Model2VecEmbedder({ model: '/nonexistent/model2vec' });
    await expect(missing.embedQuery('x')).rejects.toThrow(/lacks tokenizer.json, model.safetensors, config.json/);
  });
});
