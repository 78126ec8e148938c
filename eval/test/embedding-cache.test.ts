import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '@rag/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CachedEmbedder } from '../src/embedding-cache.ts';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'rag-embedding-cache-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** A model that counts what it embeds: vector = [length, first char code, 0.1] (0.1 is not a float32). */
function countingModel(model = 'counting-model') {
  const embedded: string[] = [];
  const embedder: Embedder = {
    modelId: model,
    describe: async () => ({ model, dimension: 3 }),
    embedDocuments: async (texts) => {
      embedded.push(...texts);
      return texts.map((text) => [text.length, text.charCodeAt(0), 0.1]);
    },
    embedQuery: async (text) => [text.length, 0, 0],
  };
  return { embedder, embedded };
}

describe('CachedEmbedder', () => {
  it('embeds each passage once across runs, and returns the same float32 vectors from the file', async () => {
    const first = countingModel();
    const run1 = await CachedEmbedder.open(first.embedder, directory);
    const fresh = await run1.embedDocuments(['alpha', 'beta']);
    expect(fresh).toEqual([
      [5, 97, Math.fround(0.1)],
      [4, 98, Math.fround(0.1)],
    ]);
    expect(await run1.embedDocuments(['beta', 'gamma'])).toEqual([
      [4, 98, Math.fround(0.1)],
      [5, 103, Math.fround(0.1)],
    ]);
    expect(first.embedded).toEqual(['alpha', 'beta', 'gamma']);

    const second = countingModel();
    const run2 = await CachedEmbedder.open(second.embedder, directory);
    expect(await run2.embedDocuments(['gamma', 'alpha', 'beta'])).toEqual([
      [5, 103, Math.fround(0.1)],
      [5, 97, Math.fround(0.1)],
      [4, 98, Math.fround(0.1)],
    ]);
    expect(second.embedded).toEqual([]);
    expect(run2.counts).toEqual({ cached: 3, embedded: 0 });
  });

  it('keeps models apart, and keeps queries for the run only', async () => {
    await (await CachedEmbedder.open(countingModel('model-a').embedder, directory)).embedDocuments(['alpha']);
    const other = countingModel('model-b');
    const cached = await CachedEmbedder.open(other.embedder, directory);
    await cached.embedDocuments(['alpha']);
    expect(other.embedded).toEqual(['alpha']);
    let queries = 0;
    const inner = countingModel('model-c').embedder;
    const counted = await CachedEmbedder.open({ ...inner, embedQuery: async (text) => (queries++, inner.embedQuery(text)) }, directory);
    expect(await counted.embedQuery('abc')).toEqual([3, 0, 0]);
    expect(await counted.embedQuery('abc')).toEqual([3, 0, 0]);
    expect(queries).toBe(1);
    const nextRun = await CachedEmbedder.open({ ...inner, embedQuery: async (text) => (queries++, inner.embedQuery(text)) }, directory);
    await nextRun.embedQuery('abc');
    expect(queries).toBe(2);
  });
});
