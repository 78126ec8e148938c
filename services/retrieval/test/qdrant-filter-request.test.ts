/**
 * What QdrantStore sends for a search filter, checked against Qdrant's documented request shapes
 * (https://qdrant.tech/documentation/concepts/filtering/: `match.any`, `range`, nested keys `meta.<key>`;
 * https://api.qdrant.tech/api-reference/points/facet): a source glob is resolved by one facet on `source` and
 * sent as `match.any` of the sources it matches, every condition sits in each prefetch and at the root beside
 * the caller's visibility `should`, and a glob matching no indexed source sends no query at all; a recency boost is
 * a formula query over the fused prefetch.
 */
import { QdrantStore, toFreshnessBoost, toSearchFilter } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkId } from '../../../packages/core/src/chunking/chunk-id.ts';
import { encodeDocument, encodeQuery } from '../../../packages/core/src/sparse/bm25-encoder.ts';
import { closeFakeServers, startFakeServer, type FakeServer } from '../../../packages/core/test/adapters/fake-server.ts';
import { FakeQdrant } from './fakes/fake-qdrant.ts';

const qdrant = new FakeQdrant();
let server: FakeServer;
let store: QdrantStore;

beforeAll(async () => {
  server = await startFakeServer(qdrant.handle);
  store = new QdrantStore({ url: server.url, collection: 'docs' });
  await store.open({ model: 'm', dimension: 2 });
  const chunk = (source: string, type: string) => ({
    id: chunkId(source, 0),
    source,
    headingPath: '',
    chunkIndex: 0,
    text: 'rollback the deployment',
    contentHash: 'h',
    groups: [],
    dense: [1, 0],
    sparse: encodeDocument('rollback the deployment'),
    ingestedAt: 'now',
    metadata: { type, modifiedAt: 1_767_225_600, meta: { team: 'platform' } },
  });
  await store.upsert([chunk('docs/operator-manual/a.md', 'md'), chunk('docs/user-guide/b.md', 'md'), chunk('hr/c.pdf', 'pdf')]);
});

afterAll(async () => {
  await store.close();
  await closeFakeServers();
});

describe('QdrantStore with a search filter', () => {
  it('indexes the filtered fields and stores the metadata in the payload', () => {
    expect(qdrant.collections.get('docs')!.payloadIndexes).toEqual(
      new Map([['source', 'keyword'], ['groups', 'keyword'], ['type', 'keyword'], ['modified_at', 'integer'], ['title', 'keyword'], ['meta.team', 'keyword']]),
    );
    const payload = [...qdrant.collections.get('docs')!.points.values()][0]!.payload;
    expect(payload).toMatchObject({ type: 'md', modified_at: 1_767_225_600, meta: { team: 'platform' } });
  });

  it('sends every condition in each prefetch and at the root, the glob resolved to match.any', async () => {
    qdrant.queries.length = 0;
    const filter = toSearchFilter({ source: 'docs/**', type: ['md', 'pdf'], modified_after: '2026-01-01T00:00:00Z', modified_before: '2026-07-01T00:00:00Z', meta: { team: 'platform' } });
    const hits = await store.search({ dense: [1, 0], sparse: encodeQuery('rollback'), limit: 5, prefetchLimit: 20, visibleGroups: ['hr'], filter });
    expect(hits.map((hit) => hit.source).sort()).toEqual(['docs/operator-manual/a.md', 'docs/user-guide/b.md']);
    const expected = {
      must: [
        { key: 'source', match: { any: ['docs/operator-manual/a.md', 'docs/user-guide/b.md'] } },
        { key: 'type', match: { any: ['md', 'pdf'] } },
        { key: 'modified_at', range: { gte: 1_767_225_600, lt: 1_782_864_000 } },
        { key: 'meta.team', match: { any: ['platform'] } },
      ],
      should: [{ is_empty: { key: 'groups' } }, { key: 'groups', match: { any: ['hr'] } }],
    };
    const [body] = qdrant.queries as Array<{ filter: unknown; prefetch: Array<{ filter: unknown }> }>;
    expect(body!.filter).toEqual(expected);
    expect(body!.prefetch.map((prefetch) => prefetch.filter)).toEqual([expected, expected]);
  });

  it("sends a follow-up topic leg's exact sources as match.any, beside the request's own glob (both must hold)", async () => {
    qdrant.queries.length = 0;
    const filter = { ...toSearchFilter({ source: 'docs/**' }), sourcesIn: ['docs/user-guide/b.md', 'hr/c.pdf'] };
    const hits = await store.search({ dense: [1, 0], sparse: encodeQuery('rollback'), limit: 5, prefetchLimit: 20, visibleGroups: ['hr'], filter });
    expect(hits.map((hit) => hit.source)).toEqual(['docs/user-guide/b.md']);
    const [body] = qdrant.queries as Array<{ filter: { must: unknown[] } }>;
    expect(body!.filter.must).toEqual([
      { key: 'source', match: { any: ['docs/operator-manual/a.md', 'docs/user-guide/b.md'] } },
      { key: 'source', match: { any: ['docs/user-guide/b.md', 'hr/c.pdf'] } },
    ]);
  });

  it('sends no source condition for a match-all glob (`**`), rather than every indexed source', async () => {
    qdrant.queries.length = 0;
    const hits = await store.search({ dense: [1, 0], sparse: encodeQuery('rollback'), limit: 5, prefetchLimit: 20, visibleGroups: [], filter: toSearchFilter({ source: '**', type: 'pdf' }) });
    expect(hits.map((hit) => hit.source)).toEqual(['hr/c.pdf']);
    const [body] = qdrant.queries as Array<{ filter: { must: unknown[] } }>;
    expect(body!.filter.must).toEqual([{ key: 'type', match: { any: ['pdf'] } }]);
  });

  it('answers nothing, without a query, for a glob no indexed source matches', async () => {
    qdrant.queries.length = 0;
    expect(await store.search({ dense: [1, 0], sparse: encodeQuery('rollback'), limit: 5, prefetchLimit: 20, visibleGroups: [], filter: toSearchFilter({ source: 'nothing/**' }) })).toEqual([]);
    expect(qdrant.queries).toEqual([]);
  });

  /**
   * Qdrant's score boosting (≥ 1.14, https://qdrant.tech/documentation/search/search-relevance/#score-boosting): a
   * `formula` query over one prefetch that fuses the legs; `$score` is that prefetch's, `exp_decay` takes x, target,
   * scale and midpoint (DecayParamsExpression, https://api.qdrant.tech/api-reference/search/query-points), and
   * `defaults` stands in for a point without `modified_at` (else the query fails on it).
   */
  it('sends a freshness boost as a formula query over the RRF prefetch, filters in the legs', async () => {
    qdrant.queries.length = 0;
    const freshness = toFreshnessBoost({ half_life_days: 30, weight: 0.1 }, 1_767_225_600_000);
    const filter = toSearchFilter({ type: 'md' });
    const hits = await store.search({ dense: [1, 0], sparse: encodeQuery('rollback'), limit: 5, prefetchLimit: 20, visibleGroups: [], filter, freshness });
    const legFilter = { must: [{ key: 'type', match: { any: ['md'] } }], should: [{ is_empty: { key: 'groups' } }] };
    expect(qdrant.queries).toEqual([
      {
        prefetch: [
          {
            prefetch: [
              { query: [1, 0], using: 'dense', filter: legFilter, limit: 20 },
              { query: encodeQuery('rollback'), using: 'bm25', filter: legFilter, limit: 20 },
            ],
            query: { fusion: 'rrf' },
            limit: 20,
          },
        ],
        query: {
          formula: { sum: ['$score', { mult: [Math.fround(0.1), { exp_decay: { x: 'modified_at', target: 1_767_225_600, scale: 2_592_000, midpoint: 0.5 } }] }] },
          defaults: { modified_at: 0 },
        },
        filter: legFilter,
        limit: 5,
        with_payload: true,
      },
    ]);
    // Modified exactly `now`: each md chunk gains the whole weight over its RRF score (1/2 + 1/2 first in both legs).
    expect(hits.map((hit) => hit.source).sort()).toEqual(['docs/operator-manual/a.md', 'docs/user-guide/b.md']);
    expect(hits[0]!.score).toBeCloseTo(1 + 0.1, 5);
    expect(hits[0]!.modifiedAt).toBe(1_767_225_600);
  });

  it('sparse only, it fuses the one leg first, so the boost adds to a rank score', async () => {
    qdrant.queries.length = 0;
    const freshness = toFreshnessBoost({}, 1_767_225_600_000);
    const hits = await store.search({ sparse: encodeQuery('rollback'), limit: 5, prefetchLimit: 20, visibleGroups: [], freshness });
    const [body] = qdrant.queries as Array<{ prefetch: Array<{ prefetch: Array<{ using: string }>; query: unknown }> }>;
    expect(body!.prefetch[0]!.prefetch.map((leg) => leg.using)).toEqual(['bm25']);
    expect(body!.prefetch[0]!.query).toEqual({ fusion: 'rrf' });
    expect(hits.map((hit) => hit.score)).toEqual([1 / 2 + Math.fround(0.1), 1 / 3 + Math.fround(0.1), 1 / 4 + Math.fround(0.1)].map(Math.fround));
  });
});
