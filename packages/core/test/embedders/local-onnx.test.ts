import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { env } from '@huggingface/transformers';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalOnnxEmbedder } from '../../src/embedders/local-onnx.ts';

const MODEL_DIR = fileURLToPath(new URL('../fixtures/models/tiny-random-bert', import.meta.url));
const SHORT = 'hello world';
const LONG = 'a much longer text with many more words than the first one, so the batch must be padded';
const TEXTS = ['the cat sat', 'on the mat', SHORT, LONG, 'query and passage'];

const embedder = new LocalOnnxEmbedder({ model: MODEL_DIR });
afterAll(() => embedder.dispose());

function maxAbsDiff(a: number[], b: number[]): number {
  return Math.max(...a.map((value, i) => Math.abs(value - (b[i] ?? Number.NaN))));
}

function norm(vector: number[]): number {
  return Math.hypot(...vector);
}

describe('LocalOnnxEmbedder on a local directory', () => {
  it('describes the model with its dimension', async () => {
    expect(await embedder.describe()).toEqual({ model: MODEL_DIR, dimension: 32 });
  });

  it('returns one unit vector of dimension 32 per text', async () => {
    const vectors = await embedder.embedDocuments(TEXTS);
    expect(vectors).toHaveLength(TEXTS.length);
    for (const vector of vectors) {
      expect(vector).toHaveLength(32);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    expect(await embedder.embedDocuments([])).toEqual([]);
  });

  it('ignores padding: a text alone and batched with a longer text give the same vector', async () => {
    const [alone] = await embedder.embedDocuments([SHORT]);
    const [batched] = await embedder.embedDocuments([SHORT, LONG]);
    expect(maxAbsDiff(alone!, batched!)).toBeLessThan(1e-5);
  });

  it('gives the same vectors whatever the batch size', async () => {
    const small = new LocalOnnxEmbedder({ model: MODEL_DIR, batchSize: 2 });
    const inBatchesOfTwo = await small.embedDocuments(TEXTS);
    const inOneBatch = await embedder.embedDocuments(TEXTS);
    inOneBatch.forEach((vector, i) => expect(maxAbsDiff(vector, inBatchesOfTwo[i]!)).toBeLessThan(1e-5));
    await small.dispose();
  });

  it('is deterministic', async () => {
    expect(await embedder.embedDocuments(TEXTS)).toEqual(await embedder.embedDocuments(TEXTS));
  });

  it('embeds a query like a document when no prefixes are set', async () => {
    const [document] = await embedder.embedDocuments([SHORT]);
    expect(await embedder.embedQuery(SHORT)).toEqual(document);
  });

  it('applies the configured e5-style prefixes', async () => {
    const prefixed = new LocalOnnxEmbedder({ model: MODEL_DIR, queryPrefix: 'query: ', passagePrefix: 'passage: ' });
    const [plain] = await embedder.embedDocuments([SHORT]);
    const query = await prefixed.embedQuery(SHORT);
    const [passage] = await prefixed.embedDocuments([SHORT]);
    expect(maxAbsDiff(query, plain!)).toBeGreaterThan(1e-3);
    expect(maxAbsDiff(passage!, plain!)).toBeGreaterThan(1e-3);
    expect(maxAbsDiff(query, passage!)).toBeGreaterThan(1e-3);
    expect(query).toEqual(await embedder.embedQuery(`query: ${SHORT}`));
    await prefixed.dispose();
  });

  it('loads the model once for concurrent callers', async () => {
    const fresh = new LocalOnnxEmbedder({ model: MODEL_DIR });
    const results = await Promise.all([fresh.embedQuery('a'), fresh.embedQuery('a'), fresh.describe()]);
    expect(results[0]).toEqual(results[1]);
    await fresh.dispose();
  });

  it('stops before embedding when the signal is aborted', async () => {
    await expect(embedder.embedDocuments(TEXTS, AbortSignal.abort())).rejects.toThrow();
  });

  it('rejects a batch size that is not a positive integer', () => {
    expect(() => new LocalOnnxEmbedder({ model: MODEL_DIR, batchSize: 0 })).toThrow(/batchSize/);
  });
});

describe('LocalOnnxEmbedder on a sentence-transformers folder', () => {
  const root = mkdtempSync(join(tmpdir(), 'rag-onnx-st-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** The fixture model copied, with one file written or changed. */
  function variant(name: string, edit: (folder: string) => void): string {
    const folder = join(root, name);
    cpSync(MODEL_DIR, folder, { recursive: true });
    edit(folder);
    return folder;
  }

  it("truncates at sentence_bert_config.json's max_seq_length, as sentence-transformers does, not at the tokenizer's 128", async () => {
    const sentenceTransformers = variant('st', (folder) => writeFileSync(join(folder, 'sentence_bert_config.json'), JSON.stringify({ max_seq_length: 6, do_lower_case: false })));
    const tokenizerCapped = variant('capped', (folder) => {
      const config = JSON.parse(readFileSync(join(folder, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
      writeFileSync(join(folder, 'tokenizer_config.json'), JSON.stringify({ ...config, model_max_length: 6 }));
    });
    const [viaSentenceConfig, viaTokenizerConfig] = await Promise.all(
      [sentenceTransformers, tokenizerCapped].map(async (model) => {
        const truncating = new LocalOnnxEmbedder({ model });
        const vector = await truncating.embedQuery(LONG);
        await truncating.dispose();
        return vector;
      }),
    );
    expect(maxAbsDiff(viaSentenceConfig!, viaTokenizerConfig!)).toBeLessThan(1e-6);
    expect(maxAbsDiff(viaSentenceConfig!, await embedder.embedQuery(LONG))).toBeGreaterThan(1e-3);
  });
});

describe('LocalOnnxEmbedder errors', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'rag-onnx-cache-'));
  const remoteHost = env.remoteHost;
  afterAll(() => {
    env.remoteHost = remoteHost;
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('says when a model directory does not exist', async () => {
    const missing = new LocalOnnxEmbedder({ model: join(cacheDir, 'no-such-model') });
    await expect(missing.embedQuery('x')).rejects.toThrow(/Model directory ".*no-such-model" does not exist/);
  });

  it('says a hub model is not cached when downloads are disabled', async () => {
    const offline = new LocalOnnxEmbedder({ model: 'Xenova/no-such-model', cacheDir, allowRemote: false });
    await expect(offline.embedQuery('x')).rejects.toThrow(/not in the cache directory .*allowRemote: false.*local directory/s);
  });

  it('says the model could not be downloaded when the hub is unreachable, and fails fast', async () => {
    env.remoteHost = `http://127.0.0.1:${await closedPort()}/`;
    const unreachable = new LocalOnnxEmbedder({ model: 'Xenova/bge-small-en-v1.5', cacheDir });
    const started = Date.now();
    await expect(unreachable.describe()).rejects.toThrow(/Could not download model "Xenova\/bge-small-en-v1.5".*ECONNREFUSED.*local directory/s);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('says the model could not be downloaded when the hub does not know the id', async () => {
    const server = createServer((_request, response) => response.writeHead(404).end('Not found'));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    env.remoteHost = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const unknown = new LocalOnnxEmbedder({ model: 'nobody/unknown-model', cacheDir });
    await expect(unknown.embedQuery('x')).rejects.toThrow(/Could not download model "nobody\/unknown-model".*local directory/s);
    server.close();
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}
