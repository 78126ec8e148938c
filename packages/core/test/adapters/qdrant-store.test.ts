/**
 * QdrantStore (through @qdrant/js-client-rest 1.17) against a server that answers as Qdrant's REST
 * API does: every answer is the envelope `{status: "ok", result, time}`, errors `{status: {error}, time}`.
 * https://api.qdrant.tech/api-reference
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { IndexedChunk } from '../../src/domain.ts';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import { closedPortUrl, closeFakeServers, hang, sendJson, startFakeServer, within, type Handler, type RecordedRequest } from './fake-server.ts';
import { failure } from './rag-failure.ts';

afterEach(closeFakeServers);

const KEY = 'qdrant-key-abcdefgh';
const C = 'docs-v2';

function ok(response: ServerResponse, result: unknown): void {
  sendJson(response, 200, { status: 'ok', result, time: 0.000_12 });
}

function qdrantError(response: ServerResponse, status: number, error: string): void {
  sendJson(response, status, { status: { error }, time: 0.000_05 });
}

const notFound = (response: ServerResponse) => qdrantError(response, 404, `Not found: Collection \`${C}\` doesn't exist!`);

/**
 * GET /collections/{c} as Qdrant 1.17 answers it, trimmed to the fields that matter here; by default with
 * the payload indexes QdrantStore creates (`source`, `groups`), `indexes` lists others.
 */
function collectionInfo(options: { denseSize?: number; metadata?: Record<string, unknown>; indexes?: string[] }) {
  return {
    status: 'green',
    optimizer_status: 'ok',
    indexed_vectors_count: 0,
    points_count: 0,
    segments_count: 2,
    config: {
      params: {
        ...(options.denseSize === undefined ? {} : { vectors: { dense: { size: options.denseSize, distance: 'Cosine' } } }),
        shard_number: 1,
        replication_factor: 1,
        write_consistency_factor: 1,
        on_disk_payload: true,
        sparse_vectors: { bm25: { modifier: 'idf' } },
      },
      hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000, max_indexing_threads: 0, on_disk: false },
      optimizer_config: { deleted_threshold: 0.2, vacuum_min_vector_number: 1000, default_segment_number: 0, flush_interval_sec: 5 },
      wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0 },
      quantization_config: null,
      ...(options.metadata ? { metadata: options.metadata } : {}),
    },
    payload_schema: Object.fromEntries((options.indexes ?? ['source', 'groups']).map((field) => [field, { data_type: 'keyword', points: 0 }])),
  };
}

/** Routes by "METHOD path"; anything unexpected is a 404 the test will notice. */
function qdrant(routes: Record<string, (request: RecordedRequest, response: ServerResponse) => void>): Handler {
  return (request, response) => {
    const route = routes[`${request.method} ${request.path}`];
    if (route) route(request, response);
    else qdrantError(response, 404, `unexpected ${request.method} ${request.path}`);
  };
}

function store(url: string, extra: Partial<ConstructorParameters<typeof QdrantStore>[0]> = {}): QdrantStore {
  return new QdrantStore({ url, apiKey: KEY, minBackoffMs: 5, ...extra });
}


function chunk(n: number, dense = true, groups: string[] = []): IndexedChunk {
  return {
    id: `00000000-0000-5000-8000-00000000000${n}`,
    source: `docs/${n % 2}.md`,
    headingPath: 'Guide > Setup',
    chunkIndex: n,
    text: `docs/${n % 2}.md > Guide > Setup\n\nbody ${n}`,
    contentHash: `hash-${n % 2}`,
    sourceVersion: n % 2 ? 'gen-1' : undefined,
    groups,
    ingestedAt: '2025-01-01T00:00:00.000Z',
    dense: dense ? [0.1 * n, 0.2, 0.3, 0.4] : undefined,
    sparse: { indices: [11, 22], values: [0.5, 1.2] },
  };
}

// Silence the client's "Api key is used with unsecure connection." warning: tests run over plain http.
const warn = console.warn;
console.warn = (...args: unknown[]) => {
  if (!String(args[0]).includes('unsecure connection')) warn(...args);
};

describe('QdrantStore.open', () => {
  it('creates a missing collection with dense + bm25 vectors, the model in its metadata, and keyword indexes on source and groups', async () => {
    const server = await startFakeServer(
      qdrant({
        [`GET /collections/${C}`]: (_, res) => notFound(res),
        [`PUT /collections/${C}`]: (_, res) => ok(res, true),
        [`PUT /collections/${C}/index?wait=true`]: (_, res) => ok(res, { operation_id: 1, status: 'completed' }),
      }),
    );
    await store(server.url).open({ model: 'Qwen/Qwen3-Embedding-0.6B', dimension: 1024 });
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /collections/${C}`,
      `PUT /collections/${C}`,
      `PUT /collections/${C}/index?wait=true`,
      `PUT /collections/${C}/index?wait=true`,
    ]);
    expect(server.requests.every((r) => r.headers['api-key'] === KEY)).toBe(true);
    expect(server.requests[1]?.body).toEqual({
      vectors: { dense: { size: 1024, distance: 'Cosine' } },
      sparse_vectors: { bm25: { modifier: 'idf' } },
      metadata: { embedding_model: 'Qwen/Qwen3-Embedding-0.6B', embedding_dimension: 1024, bm25_language: 'english' },
    });
    expect(server.requests[2]?.body).toEqual({ field_name: 'source', field_schema: 'keyword' });
    expect(server.requests[3]?.body).toEqual({ field_name: 'groups', field_schema: 'keyword' });
  });

  it('adds the groups index to a collection made before access groups, except in a dry run', async () => {
    const routes = {
      [`GET /collections/${C}`]: (_: RecordedRequest, res: ServerResponse) => ok(res, collectionInfo({ denseSize: 4, metadata: { embedding_model: 'm' }, indexes: ['source'] })),
      [`PUT /collections/${C}/index?wait=true`]: (_: RecordedRequest, res: ServerResponse) => ok(res, { operation_id: 1, status: 'completed' }),
    };
    const server = await startFakeServer(qdrant(routes));
    await store(server.url).open({ model: 'm', dimension: 4 });
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /collections/${C}`, `PUT /collections/${C}/index?wait=true`]);
    expect(server.requests[1]?.body).toEqual({ field_name: 'groups', field_schema: 'keyword' });

    const dryRun = await startFakeServer(qdrant(routes));
    await store(dryRun.url).open({ model: 'm', dimension: 4 }, { create: false });
    expect(dryRun.requests.map((r) => r.method)).toEqual(['GET']);
  });

  it('opens a collection without the groups index even when a read-only key may not create it (403), but not on other failures', async () => {
    const info = collectionInfo({ denseSize: 4, metadata: { embedding_model: 'm' }, indexes: ['source'] });
    const readOnly = await startFakeServer(
      qdrant({
        [`GET /collections/${C}`]: (_, res) => ok(res, info),
        [`PUT /collections/${C}/index?wait=true`]: (_, res) => qdrantError(res, 403, 'Forbidden: Write access denied'),
      }),
    );
    await store(readOnly.url).open({ model: 'm', dimension: 4 });
    expect(readOnly.requests.map((r) => r.method)).toEqual(['GET', 'PUT']);

    const failing = await startFakeServer(
      qdrant({
        [`GET /collections/${C}`]: (_, res) => ok(res, info),
        [`PUT /collections/${C}/index?wait=true`]: (_, res) => qdrantError(res, 400, 'Bad request: wrong field schema'),
      }),
    );
    expect((await failure(store(failing.url).open({ model: 'm', dimension: 4 }))).code).toBe('RAG_STORE_UNAVAILABLE');
  });

  it('creates a sparse-only collection when there is no model', async () => {
    const server = await startFakeServer(
      qdrant({
        [`GET /collections/${C}`]: (_, res) => notFound(res),
        [`PUT /collections/${C}`]: (_, res) => ok(res, true),
        [`PUT /collections/${C}/index?wait=true`]: (_, res) => ok(res, { operation_id: 1, status: 'completed' }),
      }),
    );
    await store(server.url).open(null);
    expect(server.requests[1]?.body).toEqual({
      sparse_vectors: { bm25: { modifier: 'idf' } },
      metadata: { embedding_model: null, embedding_dimension: null, bm25_language: 'english' },
    });
  });

  it('opens an existing collection built with the same model without writing anything', async () => {
    const server = await startFakeServer(
      qdrant({ [`GET /collections/${C}`]: (_, res) => ok(res, collectionInfo({ denseSize: 4, metadata: { embedding_model: 'm', embedding_dimension: 4 } })) }),
    );
    await store(server.url).open({ model: 'm', dimension: 4 });
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    ['another model', collectionInfo({ denseSize: 4, metadata: { embedding_model: 'other-model', embedding_dimension: 4 } }), 'was built with other-model'],
    ['another dimension, no metadata (made by other tools)', collectionInfo({ denseSize: 768 }), 'holds 768-dimension vectors'],
    ['no dense vectors', collectionInfo({ metadata: { embedding_model: null, embedding_dimension: null } }), 'has no dense vectors'],
  ])('refuses a collection with %s: RAG_MODEL_MISMATCH', async (_, info, says) => {
    const server = await startFakeServer(qdrant({ [`GET /collections/${C}`]: (_r, res) => ok(res, info) }));
    const error = await failure(store(server.url).open({ model: 'm', dimension: 4 }));
    expect(error.code).toBe('RAG_MODEL_MISMATCH');
    expect(error.message).toContain(says);
    expect(error.message).toContain('configured: m, 4 dimensions');
  });

  it('opens any collection for sparse-only reads, but refuses sparse-only writes into a dense collection', async () => {
    const server = await startFakeServer(
      qdrant({ [`GET /collections/${C}`]: (_, res) => ok(res, collectionInfo({ denseSize: 4, metadata: { embedding_model: 'm' } })) }),
    );
    const sparseOnly = store(server.url);
    await sparseOnly.open(null);
    const chunk = { id: 'id', source: 'a.md', headingPath: '', chunkIndex: 0, text: 't', contentHash: 'h', groups: [], sparse: { indices: [1], values: [1] }, ingestedAt: 'now' };
    const error = await failure(sparseOnly.upsert([chunk]));
    expect(error.code).toBe('RAG_MODEL_MISMATCH');
    expect(error.message).toContain('dense vectors of m');
    expect(server.requests.map((request) => request.method)).toEqual(['GET']);
  });

  it('with create: false (a dry run), leaves a missing collection missing and lists nothing', async () => {
    const server = await startFakeServer(qdrant({ [`GET /collections/${C}`]: (_, res) => notFound(res) }));
    const dryRun = store(server.url);
    await dryRun.open(null, { create: false });
    expect(await dryRun.listDocuments()).toEqual([]);
    expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual([`GET /collections/${C}`]);
  });

  it('checks the model of a collection another replica created first (409)', async () => {
    let gets = 0;
    const server = await startFakeServer(
      qdrant({
        [`GET /collections/${C}`]: (_, res) =>
          gets++ === 0 ? notFound(res) : ok(res, collectionInfo({ denseSize: 8, metadata: { embedding_model: 'other', embedding_dimension: 8 } })),
        [`PUT /collections/${C}`]: (_, res) => qdrantError(res, 409, `Wrong input: Collection \`${C}\` already exists!`),
      }),
    );
    const error = await failure(store(server.url).open({ model: 'm', dimension: 4 }));
    expect(error.code).toBe('RAG_MODEL_MISMATCH');
  });
});

describe('QdrantStore writes', () => {
  it('upserts in batches with wait=true, named vectors and the seed payload plus the sync fields', async () => {
    const server = await startFakeServer(qdrant({ [`PUT /collections/${C}/points?wait=true`]: (_, res) => ok(res, { operation_id: 7, status: 'completed' }) }));
    await store(server.url, { upsertBatchSize: 2 }).upsert([chunk(1, true, ['hr', 'support']), chunk(2), chunk(4, false)]);
    expect(server.requests).toHaveLength(2);
    const bodies = server.requests.map((r) => r.body as { points: Array<{ id: string }> });
    expect(bodies.map((b) => b.points.map((p) => p.id))).toEqual([[chunk(1).id, chunk(2).id], [chunk(4).id]]);
    expect(bodies[0]?.points[0]).toEqual({
      id: '00000000-0000-5000-8000-000000000001',
      vector: { dense: [0.1, 0.2, 0.3, 0.4], bm25: { indices: [11, 22], values: [0.5, 1.2] } },
      payload: {
        source: 'docs/1.md',
        heading_path: 'Guide > Setup',
        chunk_index: 1,
        text: 'docs/1.md > Guide > Setup\n\nbody 1',
        ingested_at: '2025-01-01T00:00:00.000Z',
        content_hash: 'hash-1',
        source_version: 'gen-1',
        groups: ['hr', 'support'],
        context: '',
      },
    });
    expect(bodies[1]?.points[0]).toMatchObject({ vector: { bm25: { indices: [11, 22], values: [0.5, 1.2] } }, payload: { source_version: null, groups: [] } });
    expect(bodies[1]?.points[0]).not.toHaveProperty('vector.dense');
  });

  it('deletes by ids and by source filter, waiting for the result', async () => {
    const server = await startFakeServer(qdrant({ [`POST /collections/${C}/points/delete?wait=true`]: (_, res) => ok(res, { operation_id: 8, status: 'completed' }) }));
    const qdrantStore = store(server.url);
    await qdrantStore.deleteByIds([]);
    await qdrantStore.deleteByIds(['a', 'b']);
    await qdrantStore.deleteBySource('docs/1.md');
    expect(server.requests.map((r) => r.body)).toEqual([{ points: ['a', 'b'] }, { filter: { must: [{ key: 'source', match: { value: 'docs/1.md' } }] } }]);
  });

  it('rewrites the groups of a document with one set_payload call filtered on its source', async () => {
    const server = await startFakeServer(qdrant({ [`POST /collections/${C}/points/payload?wait=true`]: (_, res) => ok(res, { operation_id: 9, status: 'completed' }) }));
    await store(server.url).setGroups('hr/pay.md', ['hr']);
    await store(server.url).setGroups('hr/pay.md', []);
    expect(server.requests.map((r) => r.body)).toEqual([
      { payload: { groups: ['hr'] }, filter: { must: [{ key: 'source', match: { value: 'hr/pay.md' } }] } },
      { payload: { groups: [] }, filter: { must: [{ key: 'source', match: { value: 'hr/pay.md' } }] } },
    ]);
  });
});

describe('QdrantStore reads', () => {
  it('lists documents by scrolling every page of payload-only points', async () => {
    const point = (id: string, source: string, hash: string, version: string | null, groups?: string[], chunkIndex?: number) => ({
      id,
      payload: { source, content_hash: hash, source_version: version, ...(groups ? { groups } : {}), ...(chunkIndex === undefined ? {} : { chunk_index: chunkIndex }) },
    });
    const server = await startFakeServer(
      qdrant({
        [`POST /collections/${C}/points/scroll`]: (req, res) =>
          (req.body as { offset?: string }).offset === undefined
            ? ok(res, { points: [point('p1', 'a.md', 'h1', 'g1', ['support', 'hr'], 1), point('p2', 'b.md', 'h2', null)], next_page_offset: 'p3' })
            : ok(res, {
                points: [point('p3', 'a.md', 'h1', 'g1', ['hr', 'support'], 0), point('p4', 'c.md', 'new', null, ['hr'], 0), point('p5', 'c.md', 'old', null, [])],
                next_page_offset: null,
              }),
      }),
    );
    const documents = await store(server.url).listDocuments();
    expect(server.requests.map((r) => r.body)).toEqual([
      { limit: 512, with_payload: ['source', 'chunk_index', 'content_hash', 'source_version', 'groups', 'pages', 'type', 'size', 'modified_at', 'meta', 'title'], with_vector: false },
      { limit: 512, offset: 'p3', with_payload: ['source', 'chunk_index', 'content_hash', 'source_version', 'groups', 'pages', 'type', 'size', 'modified_at', 'meta', 'title'], with_vector: false },
    ]);
    expect(documents).toEqual([
      // each chunk's chunk_index, for the wholeness check without hashing ids
      { source: 'a.md', contentHash: 'h1', sourceVersion: 'g1', chunkIds: ['p1', 'p3'], chunkIndexes: [1, 0], groups: ['hr', 'support'], pagesRecorded: false },
      // no `groups` key: a point written before access groups existed, public
      { source: 'b.md', contentHash: 'h2', sourceVersion: undefined, chunkIds: ['p2'], groups: [], pagesRecorded: false },
      // chunks from two versions and two sets of groups (an interrupted sync): nothing matches, so the next run redoes both;
      // p5 has no chunk_index (written by an older version), so wholeness falls back to the ids
      { source: 'c.md', contentHash: '', sourceVersion: undefined, chunkIds: ['p4', 'p5'], groups: undefined, pagesRecorded: false },
    ]);
  });

  it('counts exactly', async () => {
    const server = await startFakeServer(qdrant({ [`POST /collections/${C}/points/count`]: (_, res) => ok(res, { count: 4321 }) }));
    expect(await store(server.url).count()).toBe(4321);
    expect(server.requests[0]?.body).toEqual({ exact: true });
  });

  const hit = { id: 'p1', version: 3, score: 1, payload: { source: 'a.md', heading_path: 'A > B', chunk_index: 2, text: 'a.md > A > B\n\nhello', ingested_at: 'x', content_hash: 'h', source_version: null } };

  it('searches hybrid: two prefetches fused by RRF, each filtered to public + the caller\'s groups, mapping hits with Qdrant score as both scores', async () => {
    const server = await startFakeServer(qdrant({ [`POST /collections/${C}/points/query`]: (_, res) => ok(res, { points: [hit] }) }));
    const hits = await store(server.url).search({ dense: [0.1, 0.2], sparse: { indices: [5, 9], values: [1, 1] }, limit: 5, prefetchLimit: 50, visibleGroups: ['support', 'ops'] });
    const filter = { should: [{ is_empty: { key: 'groups' } }, { key: 'groups', match: { any: ['support', 'ops'] } }] };
    expect(server.requests[0]?.body).toEqual({
      prefetch: [
        { query: [0.1, 0.2], using: 'dense', filter, limit: 50 },
        { query: { indices: [5, 9], values: [1, 1] }, using: 'bm25', filter, limit: 50 },
      ],
      query: { fusion: 'rrf' },
      filter,
      limit: 5,
      with_payload: true,
    });
    expect(hits).toEqual([{ id: 'p1', source: 'a.md', headingPath: 'A > B', chunkIndex: 2, text: 'a.md > A > B\n\nhello', score: 1, fusionScore: 1 }]);
  });

  /**
   * Weighted RRF, Qdrant ≥ 1.17: `query: {rrf: {k?, weights?}}`, one weight per prefetch in prefetch order
   * (REST schema RrfQuery / Rrf, https://api.qdrant.tech/api-reference/search/query-points; the server's
   * formula is lib/segment/src/common/reciprocal_rank_fusion.rs). Plain RRF keeps `{fusion: "rrf"}` so
   * servers before 1.16 still answer. The fake records what is asked and fuses nothing.
   */
  it('sends RRF weights and k only when they differ from plain RRF, one weight per prefetch sent', async () => {
    const server = await startFakeServer(qdrant({ [`POST /collections/${C}/points/query`]: (_, res) => ok(res, { points: [] }) }));
    const qdrantStore = store(server.url);
    const both = { indices: [5], values: [1] };
    const noTerms = { indices: [], values: [] };
    await qdrantStore.search({ dense: [1], sparse: both, limit: 5, prefetchLimit: 20, visibleGroups: [], fusion: { k: 2, weights: { dense: 1, sparse: 1 } } });
    await qdrantStore.search({ dense: [1], sparse: both, limit: 5, prefetchLimit: 20, visibleGroups: [], fusion: { k: 2, weights: { dense: 2, sparse: 0.5 } } });
    await qdrantStore.search({ dense: [1], sparse: both, limit: 5, prefetchLimit: 20, visibleGroups: [], fusion: { k: 60, weights: { dense: 1, sparse: 1 } } });
    await qdrantStore.search({ dense: [1], sparse: both, limit: 5, prefetchLimit: 20, visibleGroups: [], fusion: { k: 10, weights: { dense: 1, sparse: 3 } } });
    await qdrantStore.search({ dense: [1], sparse: noTerms, limit: 5, prefetchLimit: 20, visibleGroups: [], fusion: { k: 2, weights: { dense: 2, sparse: 1 } } });
    await qdrantStore.search({ dense: [1], sparse: noTerms, limit: 5, prefetchLimit: 20, visibleGroups: [], fusion: { k: 2, weights: { dense: 1, sparse: 3 } } });
    const bodies = server.requests.map((r) => r.body as { prefetch: Array<{ using: string }>; query: unknown });
    expect(bodies.map((body) => body.query)).toEqual([
      { fusion: 'rrf' },
      { rrf: { weights: [2, 0.5] } },
      { rrf: { k: 60 } },
      { rrf: { k: 10, weights: [1, 3] } },
      { rrf: { weights: [2] } },
      { fusion: 'rrf' },
    ]);
    expect(bodies.map((body) => body.prefetch.map((prefetch) => prefetch.using))).toEqual([
      ['dense', 'bm25'],
      ['dense', 'bm25'],
      ['dense', 'bm25'],
      ['dense', 'bm25'],
      ['dense'],
      ['dense'],
    ]);
  });

  it('asks each leg for the caller\'s prefetch limit, and at least limit candidates (the floor is the Retriever\'s, as for the embedded store)', async () => {
    const server = await startFakeServer(qdrant({ [`POST /collections/${C}/points/query`]: (_, res) => ok(res, { points: [] }) }));
    const qdrantStore = store(server.url);
    await qdrantStore.search({ dense: [1], sparse: { indices: [1], values: [1] }, limit: 5, prefetchLimit: 5, visibleGroups: [] });
    await qdrantStore.search({ dense: [1], sparse: { indices: [1], values: [1] }, limit: 30, prefetchLimit: 10, visibleGroups: [] });
    const limits = server.requests.map((r) => (r.body as { prefetch: Array<{ limit: number }> }).prefetch.map((p) => p.limit));
    expect(limits).toEqual([
      [5, 5],
      [30, 30],
    ]);
  });

  it('searches sparse only without a dense vector, public points only for a caller without groups, and skips a query with no terms', async () => {
    const server = await startFakeServer(qdrant({ [`POST /collections/${C}/points/query`]: (_, res) => ok(res, { points: [hit] }) }));
    const qdrantStore = store(server.url);
    const hits = await qdrantStore.search({ sparse: { indices: [5], values: [1] }, limit: 3, prefetchLimit: 50, visibleGroups: [] });
    expect(server.requests[0]?.body).toEqual({
      query: { indices: [5], values: [1] },
      using: 'bm25',
      filter: { should: [{ is_empty: { key: 'groups' } }] },
      limit: 3,
      with_payload: true,
    });
    expect(hits[0]?.fusionScore).toBe(1);
    expect(await qdrantStore.search({ sparse: { indices: [], values: [] }, limit: 3, prefetchLimit: 50, visibleGroups: [] })).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('stops waiting when the caller aborts a search', async () => {
    const server = await startFakeServer(hang);
    const controller = new AbortController();
    const pending = failure(store(server.url).search({ sparse: { indices: [5], values: [1] }, limit: 3, prefetchLimit: 3, visibleGroups: [] }, controller.signal));
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect((await within(pending)).code).toBe('RAG_CLIENT_CLOSED');
  });
});

describe('QdrantStore faults', () => {
  it('checkReady: a missing collection is RAG_STORE_NOT_READY', async () => {
    const server = await startFakeServer(qdrant({ [`GET /collections/${C}`]: (_, res) => notFound(res) }));
    const error = await failure(store(server.url).checkReady());
    expect(error.code).toBe('RAG_STORE_NOT_READY');
    expect(error.message).toContain(`"${C}"`);
  });

  it('checkReady passes when the collection exists', async () => {
    const server = await startFakeServer(qdrant({ [`GET /collections/${C}`]: (_, res) => ok(res, collectionInfo({ denseSize: 4 })) }));
    await store(server.url).checkReady();
  });

  it('a refused connection is RAG_STORE_UNAVAILABLE naming the URL, not the key', async () => {
    const url = await closedPortUrl();
    const error = await within(failure(store(url).checkReady()));
    expect(error.code).toBe('RAG_STORE_UNAVAILABLE');
    expect(error.message).toContain(url);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).not.toContain(KEY);
  });

  it('a hang past timeoutMs is RAG_STORE_TIMEOUT', async () => {
    const server = await startFakeServer(hang);
    const error = await within(failure(store(server.url, { timeoutMs: 200 }).count()));
    expect(error.code).toBe('RAG_STORE_TIMEOUT');
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [503, 3],
    [500, 1],
    [400, 1],
  ])('HTTP %i: %i attempt(s), then RAG_STORE_UNAVAILABLE with Qdrant message', async (status, attempts) => {
    const server = await startFakeServer((_, res) => qdrantError(res, status, 'Service internal error: something broke'));
    const error = await within(failure(store(server.url).count()));
    expect(error.code).toBe('RAG_STORE_UNAVAILABLE');
    expect(error.message).toContain(`HTTP ${status}: Service internal error: something broke`);
    expect(server.requests).toHaveLength(attempts);
  });

  it('rides out a 429 with Retry-After', async () => {
    let calls = 0;
    const server = await startFakeServer((_, res) =>
      calls++ === 0
        ? sendJson(res, 429, { status: { error: 'Too many requests' }, time: 0 }, { 'retry-after': '0' })
        : ok(res, { count: 3 }),
    );
    expect(await store(server.url).count()).toBe(3);
    expect(server.requests).toHaveLength(2);
  });

  it('garbage JSON is RAG_STORE_UNAVAILABLE', async () => {
    const server = await startFakeServer((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"result": {"count"');
    });
    const error = await within(failure(store(server.url).count()));
    expect(error.code).toBe('RAG_STORE_UNAVAILABLE');
    expect(error.message).toContain('invalid JSON');
  });
});
