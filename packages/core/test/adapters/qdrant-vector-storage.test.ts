/**
 * QDRANT_QUANTIZATION and QDRANT_VECTORS_ON_DISK reach the request that creates the collection, in the dense
 * vector's params (`PUT /collections/{c}`, VectorParams `on_disk` and `quantization_config`:
 * https://api.qdrant.tech/v-1-17-x/api-reference/collections/create-collection; scalar quantization as
 * https://qdrant.tech/documentation/guides/quantization/#setting-up-scalar-quantization sets it up), asserted on
 * the exact body a local server receives; unset, nothing is sent and Qdrant keeps its defaults (vectors in RAM,
 * no quantization). qdrant-vector-storage.real.test.ts has Qdrant's engine take the same body.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { collectionCreateRequest } from './collection-create-request.ts';
import { loadConfig } from '../../src/config.ts';
import { closeFakeServers } from './fake-server.ts';

afterEach(closeFakeServers);

const createRequest = (env: Record<string, string>) => collectionCreateRequest(env, 'onnx-community/Qwen3-Embedding-0.6B-ONNX');

describe('the dense vectors of a new collection', () => {
  it('QDRANT_QUANTIZATION=int8: an int8 copy in RAM, the float32 originals on disk', async () => {
    const body = await createRequest({ QDRANT_QUANTIZATION: 'int8' });
    expect(body.vectors).toEqual({
      dense: { size: 1024, distance: 'Cosine', on_disk: true, quantization_config: { scalar: { type: 'int8', quantile: 0.99, always_ram: true } } },
    });
    expect(body.sparse_vectors).toEqual({ bm25: { modifier: 'idf' } });
    expect(body).not.toHaveProperty('quantization_config');
  });

  it('QDRANT_VECTORS_ON_DISK=true alone: float32 vectors served from disk, no quantization', async () => {
    const body = await createRequest({ QDRANT_VECTORS_ON_DISK: 'true' });
    expect(body.vectors).toEqual({ dense: { size: 1024, distance: 'Cosine', on_disk: true } });
  });

  it('int8 with QDRANT_VECTORS_ON_DISK=false keeps the originals in RAM too', async () => {
    const body = await createRequest({ QDRANT_QUANTIZATION: 'int8', QDRANT_VECTORS_ON_DISK: 'false' });
    expect(body.vectors).toMatchObject({ dense: { on_disk: false, quantization_config: { scalar: { type: 'int8' } } } });
  });

  it('unset: Qdrant\'s defaults, nothing sent', async () => {
    const body = await createRequest({});
    expect(body.vectors).toEqual({ dense: { size: 1024, distance: 'Cosine' } });
  });

  it('refuses another quantization at start, naming the variable', () => {
    expect(() => loadConfig({ QDRANT_QUANTIZATION: 'binary' })).toThrow(/QDRANT_QUANTIZATION/);
    expect(() => loadConfig({ QDRANT_VECTORS_ON_DISK: 'yes' })).toThrow(/QDRANT_VECTORS_ON_DISK/);
  });
});
