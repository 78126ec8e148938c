/**
 * QdrantStore reads a chunk by id exactly when a search may return it, for every shape of `groups` payload,
 * against the fake Qdrant (whose filters follow Qdrant's documentation); qdrant-visibility.real.test.ts
 * runs the same cases on Qdrant's engine.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { FakeQdrant } from '../../../../services/retrieval/test/fakes/fake-qdrant.ts';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import { closeFakeServers, startFakeServer } from './fake-server.ts';
import { expectSearchAndReadAgree, writeGroupsShapes } from './qdrant-visibility-cases.ts';

describe('QdrantStore visibility, by search and by id, for every shape of groups (fake Qdrant)', () => {
  let store: QdrantStore;

  beforeAll(async () => {
    const { url } = await startFakeServer(new FakeQdrant().handle);
    store = new QdrantStore({ url, collection: 'shapes', retries: 0 });
    await store.open({ model: 'shapes-model', dimension: 2 });
    await writeGroupsShapes(url, 'shapes');
  });

  afterAll(closeFakeServers);

  it('a string, a number, a nested list: each is readable by id exactly by the callers whose searches return it', async () => {
    await expectSearchAndReadAgree(store);
  });
});
