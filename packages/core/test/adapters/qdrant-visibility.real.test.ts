/**
 * The cases of qdrant-visibility.test.ts on Qdrant's engine: QdrantStore against Qdrant Edge
 * (../real/qdrant-edge.ts), so the fake's filter semantics and the adapter's filters are both checked
 * against Qdrant's own code.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import { startQdrantEdge, type QdrantEdgeServer } from '../real/qdrant-edge.ts';
import { realComponentSkipReason, venvPython } from '../real/real-components.ts';
import { expectSearchAndReadAgree, writeGroupsShapes } from './qdrant-visibility-cases.ts';

const python = venvPython('qdrant-edge');
const skipReason = realComponentSkipReason('qdrant-visibility.real.test.ts', python ? undefined : 'the qdrant-edge Python environment (scripts/python-env.sh qdrant-edge) is missing');

describe.skipIf(skipReason !== undefined)('QdrantStore visibility, by search and by id, for every shape of groups (Qdrant Edge)', () => {
  let edge: QdrantEdgeServer;
  let store: QdrantStore;

  beforeAll(async () => {
    edge = await startQdrantEdge(python!);
    store = new QdrantStore({ url: edge.url, collection: 'shapes', retries: 0 });
    await store.open({ model: 'shapes-model', dimension: 2 });
    await writeGroupsShapes(edge.url, 'shapes');
  });

  afterAll(async () => {
    await edge?.close();
  });

  it('a string, a number, a nested list: each is readable by id exactly by the callers whose searches return it', async () => {
    await expectSearchAndReadAgree(store);
  });
});
