/**
 * QDRANT_SHARD_NUMBER, QDRANT_REPLICATION_FACTOR and QDRANT_WRITE_CONSISTENCY_FACTOR reach the request that
 * creates the collection (`PUT /collections/{c}` with shard_number, replication_factor,
 * write_consistency_factor: https://api.qdrant.tech/v-1-17-x/api-reference/collections/create-collection),
 * and nothing of them is sent when they are unset (Qdrant's defaults), as the gke-distributed overlay needs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { collectionCreateRequest } from './collection-create-request.ts';
import { loadConfig } from '../../src/config.ts';
import { closeFakeServers } from './fake-server.ts';

afterEach(closeFakeServers);

const createRequest = (env: Record<string, string>) => collectionCreateRequest(env, 'Qwen/Qwen3-Embedding-0.6B');

describe('a collection created on a Qdrant cluster', () => {
  it('is created with the shards, copies and write consistency the environment names', async () => {
    const body = await createRequest({ QDRANT_SHARD_NUMBER: '2', QDRANT_REPLICATION_FACTOR: '2', QDRANT_WRITE_CONSISTENCY_FACTOR: '1' });
    expect(body).toMatchObject({ shard_number: 2, replication_factor: 2, write_consistency_factor: 1 });
  });

  it('leaves them to Qdrant when unset', async () => {
    const body = await createRequest({});
    expect(Object.keys(body).sort()).toEqual(['metadata', 'sparse_vectors', 'vectors']);
  });

  it('refuses a replication factor of zero at start', () => {
    expect(() => loadConfig({ QDRANT_REPLICATION_FACTOR: '0' })).toThrow(/QDRANT_REPLICATION_FACTOR/);
  });
});
