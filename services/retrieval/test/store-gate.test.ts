import type { EmbeddingModelLock, Embedder, VectorStore } from '@rag/core';
import { RagError } from '@rag/core';
import { describe, expect, it } from 'vitest';
import { StoreGate } from '../src/store-gate.ts';

/** A store whose open() fails with the queued errors first, recording what it was opened with. */
function flakyStore(failures: Error[]) {
  const opens: Array<EmbeddingModelLock | null> = [];
  const store = {
    async open(lock: EmbeddingModelLock | null) {
      opens.push(lock);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const failure = failures.shift();
      if (failure) throw failure;
    },
  } as unknown as VectorStore;
  return { store, opens };
}

const embedder = { modelId: 'm', describe: async () => ({ model: 'm', dimension: 4 }) } as unknown as Embedder;

describe('StoreGate', () => {
  it('opens the store with the embedder model lock once, however many requests wait', async () => {
    const { store, opens } = flakyStore([]);
    const gate = new StoreGate(store, embedder);
    await Promise.all([gate.ready(), gate.ready(), gate.ready()]);
    await gate.ready();
    expect(opens).toEqual([{ model: 'm', dimension: 4 }]);
  });

  it('forgets a failed open, so the next request tries again', async () => {
    const { store, opens } = flakyStore([new RagError('RAG_STORE_UNAVAILABLE')]);
    const gate = new StoreGate(store, undefined);
    await expect(gate.ready()).rejects.toMatchObject({ code: 'RAG_STORE_UNAVAILABLE' });
    await gate.ready();
    await gate.ready();
    expect(opens).toEqual([null, null]);
  });

  it('stops one caller waiting when its signal aborts, without cancelling the shared open', async () => {
    const { store, opens } = flakyStore([]);
    const gate = new StoreGate(store, undefined);
    const caller = new AbortController();
    const abandoned = gate.ready(caller.signal);
    caller.abort(new Error('client closed the request'));
    await expect(abandoned).rejects.toThrow('client closed the request');
    await gate.ready();
    expect(opens).toHaveLength(1);
  });
});
