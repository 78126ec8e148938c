/**
 * The fake Qdrant scores as Qdrant does, on numbers worked out by hand from Qdrant's documented formulas
 * (never from packages/core, whose fusion and scoring the production-path tests check against it):
 * RRF Σ 1/(position + 2) in f32, and the IDF modifier ln((N − n + 0.5)/(n + 0.5) + 1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakeServers, startFakeServer } from '../../../../packages/core/test/adapters/fake-server.ts';
import { FakeQdrant, rrfFusion } from './fake-qdrant.ts';

const point = (id: string) => ({ id });

describe('the fake Qdrant\'s RRF', () => {
  it('scores a point first in both of two legs 1/2 + 1/2 = 1, and one leg\'s second 1/3', () => {
    const fused = rrfFusion([[point('a'), point('b')], [point('a'), point('c')]]);
    expect(fused.map(({ point: p, score }) => [p.id, score])).toEqual([
      ['a', 1],
      ['b', Math.fround(1 / 3)],
      ['c', Math.fround(1 / 3)],
    ]);
  });

  it('sums in f32 as Qdrant does: positions 0, 1, 2 of three legs give 1.0833334', () => {
    const [only] = rrfFusion([[point('x')], [point('y'), point('x')], [point('y'), point('z'), point('x')]]).filter(({ point: p }) => p.id === 'x');
    expect(only!.score).toBe(Math.fround(1.0833334));
    expect(only!.score).not.toBe(1 / 2 + 1 / 3 + 1 / 4);
  });

  it('weighs legs as Qdrant ≥ 1.17 does: 1 / ((position + 1) / weight + k - 1), nothing at weight 0', () => {
    // Qdrant Edge 0.9.0 scored the point first in both legs 1.25 at weights [3, 1] (0.75 + 0.5), and the
    // second of the first leg 1 / (2/3 + 1) in f32 = 0.5999999642372131 (not f32(0.6)).
    const fused = rrfFusion([[point('a'), point('b')], [point('a'), point('c')]], 2, [3, 1]);
    expect(fused.map(({ point: p, score }) => [p.id, score])).toEqual([
      ['a', 1.25],
      ['b', 0.5999999642372131],
      ['c', Math.fround(1 / 3)],
    ]);
    expect(rrfFusion([[point('a')], [point('b')]], 2, [1, 0]).map(({ score }) => score)).toEqual([0.5, 0]);
  });

  it('ranks a point in both legs above one that leads a single leg, and honours {rrf: {k}}', () => {
    expect(rrfFusion([[point('solo'), point('both')], [point('both')]]).map(({ point: p }) => p.id)).toEqual(['both', 'solo']);
    expect(rrfFusion([[point('a')]], 60)[0]!.score).toBe(Math.fround(1 / 60));
  });
});

describe('the fake Qdrant over HTTP', () => {
  const qdrant = new FakeQdrant();
  let url = '';

  beforeAll(async () => {
    url = (await startFakeServer(qdrant.handle)).url;
    const put = (path: string, body: unknown) => fetch(`${url}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await put('/collections/c', { vectors: { dense: { size: 2, distance: 'Cosine' } }, sparse_vectors: { bm25: { modifier: 'idf' } } });
    // Term 7 is in 1 of 4 points, term 8 in 3 of 4.
    await put('/collections/c/points', {
      points: [
        { id: 'p1', vector: { dense: [1, 0], bm25: { indices: [7, 8], values: [0.5, 2] } }, payload: {} },
        { id: 'p2', vector: { dense: [0, 1], bm25: { indices: [8], values: [1] } }, payload: { groups: ['hr'] } },
        { id: 'p3', vector: { dense: [1, 1], bm25: { indices: [8], values: [1.5] } }, payload: { groups: [] } },
        { id: 'p4', vector: { dense: [1, 0.1], bm25: { indices: [9], values: [1] } }, payload: {} },
      ],
    });
  });

  afterAll(closeFakeServers);

  const query = async (body: unknown) => {
    const response = await fetch(`${url}/collections/c/points/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return ((await response.json()) as { result: { points: Array<{ id: string; score: number }> } }).result.points;
  };

  it('scores a sparse query with the IDF of the whole collection', async () => {
    const idf7 = Math.log((4 - 1 + 0.5) / (1 + 0.5) + 1); // ln(10/3)
    const idf8 = Math.log((4 - 3 + 0.5) / (3 + 0.5) + 1); // ln(10/7)
    const hits = await query({ query: { indices: [7, 8], values: [1, 1] }, using: 'bm25', limit: 10 });
    expect(hits.map((hit) => hit.id)).toEqual(['p1', 'p3', 'p2']);
    expect(hits[0]!.score).toBeCloseTo(0.5 * idf7 + 2 * idf8, 6);
    expect(hits[1]!.score).toBeCloseTo(1.5 * idf8, 6);
    // A filter hides p2 without changing anyone's IDF.
    const publicOnly = await query({ query: { indices: [7, 8], values: [1, 1] }, using: 'bm25', limit: 10, filter: { should: [{ is_empty: { key: 'groups' } }, { key: 'groups', match: { any: [] } }] } });
    expect(publicOnly.map((hit) => [hit.id, hit.score])).toEqual(hits.filter((hit) => hit.id !== 'p2').map((hit) => [hit.id, hit.score]));
  });

  it('fuses dense and sparse prefetches with RRF k = 2', async () => {
    const hits = await query({
      prefetch: [
        { query: [1, 0], using: 'dense', limit: 10 },
        { query: { indices: [7, 8], values: [1, 1] }, using: 'bm25', limit: 10 },
      ],
      query: { fusion: 'rrf' },
      limit: 10,
    });
    // dense: p1, p4, p3, p2; sparse: p1, p3, p2.
    expect(hits.map((hit) => [hit.id, hit.score])).toEqual([
      ['p1', 1],
      ['p3', Math.fround(Math.fround(1 / 4) + Math.fround(1 / 3))],
      ['p2', Math.fround(Math.fround(1 / 5) + Math.fround(1 / 4))],
      ['p4', Math.fround(1 / 3)],
    ]);
  });
});

/**
 * Where Qdrant applies filters in a query with prefetches, and what its IDF counts. Every number below is
 * what Qdrant Edge 0.9.0 (the server's segment and query code, packages/core/test/real/qdrant-edge-oracle.py)
 * answered to the same bodies over the same points, and agrees with the source: the root filter is merged
 * into every prefetch and nowhere else (lib/shard/src/query/planned_query.rs, "Filters are propagated into
 * the leaves"), by `Filter::merge_owned`, which concatenates the clause lists kind by kind
 * (lib/segment/src/types.rs); the IDF's N is the number of indexed sparse vectors, empty ones left out.
 */
describe('the fake Qdrant applies filters where Qdrant does', () => {
  const qdrant = new FakeQdrant();
  let url = '';
  const call = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${url}/collections/f${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await response.json()) as { result: { points: Array<{ id: string; score: number }> } };
  };
  const query = async (body: unknown) => (await call('POST', '/points/query', body)).result.points.map((point) => [point.id, point.score]);
  const isPublic = { is_empty: { key: 'groups' } };
  const inHr = { key: 'groups', match: { any: ['hr'] } };
  const towardHr = { query: [0, 1], using: 'dense' };

  beforeAll(async () => {
    url = (await startFakeServer(qdrant.handle)).url;
    await call('PUT', '', { vectors: { dense: { size: 2, distance: 'Cosine' } }, sparse_vectors: { bm25: { modifier: 'idf' } } });
    await call('PUT', '/points', {
      points: [
        { id: 'p1', vector: { dense: [1, 0], bm25: { indices: [7, 8], values: [0.5, 2] } }, payload: {} },
        { id: 'p2', vector: { dense: [0, 1], bm25: { indices: [8], values: [1] } }, payload: { groups: ['hr'] } },
        { id: 'p3', vector: { dense: [1, 1], bm25: { indices: [8], values: [1.5] } }, payload: { groups: [] } },
        { id: 'p4', vector: { dense: [1, 0.1], bm25: { indices: [9], values: [1] } }, payload: {} },
        { id: 'p5', vector: { dense: [0.5, 1], bm25: { indices: [], values: [] } }, payload: { groups: 'hr' } },
      ],
    });
  });

  afterAll(closeFakeServers);

  it('ranks each prefetch among the points the root filter lets through', async () => {
    // Toward hr: p2 then p5 lead, but they are not public; the one-point leg holds p3.
    expect(await query({ prefetch: [{ ...towardHr, limit: 1 }], query: { fusion: 'rrf' }, filter: { should: [isPublic] }, limit: 10 })).toEqual([['p3', 0.5]]);
  });

  it('ORs a root `should` with a prefetch `should`, ANDs two `must`, and does not filter the fused result again', async () => {
    const shoulds = await query({ prefetch: [{ ...towardHr, limit: 2, filter: { should: [inHr] } }], query: { fusion: 'rrf' }, filter: { should: [isPublic] }, limit: 10 });
    expect(shoulds).toEqual([
      ['p2', 0.5],
      ['p5', Math.fround(1 / 3)],
    ]);
    expect(await query({ prefetch: [{ ...towardHr, limit: 2, filter: { must: [inHr] } }], query: { fusion: 'rrf' }, filter: { must: [isPublic] }, limit: 10 })).toEqual([]);
  });

  it('leaves points with an empty sparse vector out of the IDF\'s N', async () => {
    const hits = await query({ query: { indices: [7, 8], values: [1, 1] }, using: 'bm25', limit: 10 });
    expect(hits.map(([id]) => id)).toEqual(['p1', 'p3', 'p2']);
    // Term 8 is in 3 of the 4 non-empty vectors: idf ln(1.5/3.5 + 1) = 0.35667497 (0.5390 if p5 counted).
    expect(hits[2]![1]).toBeCloseTo(0.3566749691963196, 6);
    expect(hits[0]![1]).toBeCloseTo(1.3153363466262817, 6);
  });
});
