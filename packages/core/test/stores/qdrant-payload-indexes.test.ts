/**
 * QdrantStore makes the search filters' payload indexes itself, idempotently: the exact PUT /collections/{c}/index
 * requests (https://api.qdrant.tech/api-reference/indexes/create-field-index: {field_name, field_schema}, schema
 * names from https://qdrant.tech/documentation/manage-data/indexing/#payload-index, which the fake Qdrant checks)
 * for the fixed keys and each custom `meta.<key>` a document brings, each once, across writes and processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexedChunk } from '../../src/domain.ts';
import type { DocumentMetadata } from '../../src/search-filter/document-metadata.ts';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import { FakeQdrant } from '../../../../services/retrieval/test/fakes/fake-qdrant.ts';
import { closeFakeServers, startFakeServer, type FakeServer } from '../adapters/fake-server.ts';

const LOCK = { model: 'index-test', dimension: 2 };
const C = 'indexes';

function chunk(source: string, metadata: DocumentMetadata | undefined): IndexedChunk {
  return { id: crypto.randomUUID(), source, headingPath: '', chunkIndex: 0, text: 't', contentHash: 'h', groups: [], dense: [1, 0], sparse: { indices: [1], values: [1] }, ingestedAt: 'now', metadata };
}

let server: FakeServer;
const indexRequests = () => server.requests.filter((r) => r.method === 'PUT' && r.path.startsWith(`/collections/${C}/index`)).map((r) => r.body);

beforeAll(async () => {
  server = await startFakeServer(new FakeQdrant().handle);
});
afterAll(closeFakeServers);

describe('QdrantStore payload indexes', () => {
  it('creates each filterable key once: source and groups with the collection, the rest at the first write with metadata', async () => {
    const store = new QdrantStore({ url: server.url, collection: C, retries: 0 });
    await store.open(LOCK);
    await store.upsert([chunk('a.md', undefined)]);
    expect(indexRequests()).toEqual([
      { field_name: 'source', field_schema: 'keyword' },
      { field_name: 'groups', field_schema: 'keyword' },
    ]);
    await store.upsert([chunk('b.md', { type: 'md', modifiedAt: 1, meta: { tier: 'gold', team: 'sre' } }), chunk('c.md', { type: 'md', meta: { team: 'docs' } })]);
    expect(indexRequests().slice(2)).toEqual([
      { field_name: 'type', field_schema: 'keyword' },
      { field_name: 'modified_at', field_schema: 'integer' },
      { field_name: 'title', field_schema: 'keyword' },
      { field_name: 'meta.team', field_schema: 'keyword' },
      { field_name: 'meta.tier', field_schema: 'keyword' },
    ]);
    await store.upsert([chunk('d.md', { type: 'pdf', meta: { team: 'x' } })]);
    expect(indexRequests()).toHaveLength(7);
    // A key first seen in a metadata-only rewrite gets its index then.
    await store.setMetadata('d.md', { type: 'pdf', meta: { owner: 'ana' } });
    expect(indexRequests().slice(7)).toEqual([{ field_name: 'meta.owner', field_schema: 'keyword' }]);
  });

  it('asks for none again from another process: it reads the indexes the collection lists', async () => {
    const before = indexRequests().length;
    const another = new QdrantStore({ url: server.url, collection: C, retries: 0 });
    await another.open(LOCK);
    await another.upsert([chunk('e.md', { type: 'md', modifiedAt: 2, meta: { team: 'sre', owner: 'bo' } })]);
    expect(indexRequests()).toHaveLength(before);
  });
});
