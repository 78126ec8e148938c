/**
 * An in-memory Qdrant speaking the REST API that @qdrant/js-client-rest calls, and nothing more:
 * collection get/create, payload index, upsert, delete (ids or `source` filter), scroll, count and
 * the Query API (one sparse query, or dense + bm25 prefetches fused by RRF).
 * Answers use Qdrant's envelope `{status: "ok", result, time}`, errors `{status: {error}, time}`.
 * https://api.qdrant.tech/api-reference
 *
 * Scoring is Qdrant's: cosine for `dense`; for `bm25` (modifier idf) Σ idf(i)·q_i·d_i with
 * idf = ln((N − n + 0.5)/(n + 0.5) + 1); fusion is the real RRF of packages/core/src/fusion/rrf.ts.
 */
import type { ServerResponse } from 'node:http';
import { reciprocalRankFusion, type SparseVector } from '@rag/core';
import { sendJson, type RecordedRequest } from '../../../../packages/core/test/adapters/fake-server.ts';

interface Point {
  id: string;
  dense?: number[];
  sparse?: SparseVector;
  payload: Record<string, unknown>;
}

interface Collection {
  config: Record<string, unknown>;
  points: Map<string, Point>;
}

interface Prefetch {
  query: number[] | SparseVector;
  using: string;
  limit: number;
}

type Route = (collection: string, body: any, response: ServerResponse) => void;

export class FakeQdrant {
  readonly collections = new Map<string, Collection>();
  /** Every Query API body received, for the tests to assert the exact request. */
  readonly queries: unknown[] = [];
  /** What each of those queries was answered, in order. */
  readonly answers: Array<{ points: Array<{ id: string; score: number; payload: Record<string, unknown> }> }> = [];

  private readonly routes: Record<string, Route> = {
    'GET ': (name, _body, res) => this.getCollection(name, res),
    'PUT ': (name, body, res) => this.createCollection(name, body, res),
    'PUT /index': (name, _body, res) => this.withCollection(name, res, () => ({ operation_id: 0, status: 'completed' })),
    'PUT /points': (name, body, res) => this.withCollection(name, res, (c) => this.upsert(c, body)),
    'POST /points/delete': (name, body, res) => this.withCollection(name, res, (c) => this.delete(c, body)),
    'POST /points/scroll': (name, body, res) => this.withCollection(name, res, (c) => scroll(c, body)),
    'POST /points/count': (name, _body, res) => this.withCollection(name, res, (c) => ({ count: c.points.size })),
    'POST /points/query': (name, body, res) => this.withCollection(name, res, (c) => this.query(c, body)),
  };

  /** The fake-server handler. */
  handle = (request: RecordedRequest, response: ServerResponse): void => {
    const { pathname } = new URL(request.path, 'http://qdrant');
    const match = /^\/collections\/([^/]+)(\/.*)?$/.exec(pathname);
    const route = match ? this.routes[`${request.method} ${match[2] ?? ''}`] : undefined;
    if (!match || !route) return qdrantError(response, 404, `Not found: ${request.method} ${pathname}`);
    route(decodeURIComponent(match[1]!), request.body, response);
  };

  private getCollection(name: string, response: ServerResponse): void {
    const collection = this.collections.get(name);
    if (!collection) return qdrantError(response, 404, `Not found: Collection \`${name}\` doesn't exist!`);
    ok(response, { status: 'green', optimizer_status: 'ok', points_count: collection.points.size, config: collection.config, payload_schema: {} });
  }

  private createCollection(name: string, body: any, response: ServerResponse): void {
    if (this.collections.has(name)) return qdrantError(response, 409, `Wrong input: Collection \`${name}\` already exists!`);
    const params = { ...(body.vectors ? { vectors: body.vectors } : {}), sparse_vectors: body.sparse_vectors };
    this.collections.set(name, { config: { params, ...(body.metadata ? { metadata: body.metadata } : {}) }, points: new Map() });
    ok(response, true);
  }

  private withCollection(name: string, response: ServerResponse, answer: (collection: Collection) => unknown): void {
    const collection = this.collections.get(name);
    if (!collection) return qdrantError(response, 404, `Not found: Collection \`${name}\` doesn't exist!`);
    ok(response, answer(collection));
  }

  private upsert(collection: Collection, body: any) {
    for (const point of body.points as Array<{ id: string; vector: Record<string, any>; payload: Record<string, unknown> }>) {
      collection.points.set(String(point.id), { id: String(point.id), dense: point.vector.dense, sparse: point.vector.bm25, payload: point.payload });
    }
    return { operation_id: 1, status: 'completed' };
  }

  private delete(collection: Collection, body: any) {
    if (Array.isArray(body.points)) for (const id of body.points) collection.points.delete(String(id));
    const source = body.filter?.must?.[0]?.match?.value;
    if (source !== undefined) {
      for (const [id, point] of collection.points) if (point.payload.source === source) collection.points.delete(id);
    }
    return { operation_id: 2, status: 'completed' };
  }

  private query(collection: Collection, body: any) {
    this.queries.push(body);
    const points = [...collection.points.values()];
    const ranked = body.prefetch
      ? fuse(points, body.prefetch as Prefetch[])
      : rank(points, { query: body.query, using: body.using, limit: body.limit });
    const answer = { points: ranked.slice(0, body.limit).map(({ point, score }) => ({ id: point.id, version: 1, score, payload: point.payload })) };
    this.answers.push(answer);
    return answer;
  }
}

function fuse(points: Point[], prefetches: Prefetch[]): Array<{ point: Point; score: number }> {
  const byId = new Map(points.map((point) => [point.id, point]));
  const rankings = prefetches.map((prefetch) => rank(points, prefetch).map(({ point }) => point.id));
  return reciprocalRankFusion(rankings).map(({ id, score }) => ({ point: byId.get(id)!, score }));
}

/** One leg: the `limit` best points for a dense or sparse query; a sparse leg only returns points sharing a term. */
function rank(points: Point[], prefetch: Prefetch): Array<{ point: Point; score: number }> {
  const score = prefetch.using === 'dense' ? denseScorer(prefetch.query as number[]) : sparseScorer(points, prefetch.query as SparseVector);
  return points
    .map((point) => ({ point, score: score(point) }))
    .filter(({ score: s }) => s !== undefined && (prefetch.using === 'dense' || s > 0))
    .map(({ point, score: s }) => ({ point, score: s! }))
    .sort((a, b) => b.score - a.score || (a.point.id < b.point.id ? -1 : 1))
    .slice(0, prefetch.limit);
}

function denseScorer(query: number[]): (point: Point) => number | undefined {
  return (point) => (point.dense ? cosine(query, point.dense) : undefined);
}

function sparseScorer(points: Point[], query: SparseVector): (point: Point) => number | undefined {
  const withSparse = points.filter((point) => point.sparse);
  const idf = new Map<number, number>();
  for (const index of query.indices) {
    const n = withSparse.filter((point) => point.sparse!.indices.includes(index)).length;
    idf.set(index, Math.log((withSparse.length - n + 0.5) / (n + 0.5) + 1));
  }
  return (point) => {
    if (!point.sparse) return undefined;
    let total = 0;
    query.indices.forEach((index, i) => {
      const at = point.sparse!.indices.indexOf(index);
      if (at >= 0) total += idf.get(index)! * query.values[i]! * point.sparse!.values[at]!;
    });
    return total;
  };
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  });
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Pages in id order; `offset` is the first id of the page, `next_page_offset` the first of the next. */
function scroll(collection: Collection, body: any) {
  const ids = [...collection.points.keys()].sort();
  const start = body.offset === undefined || body.offset === null ? 0 : ids.indexOf(String(body.offset));
  const page = ids.slice(Math.max(start, 0), Math.max(start, 0) + body.limit);
  const next = ids[Math.max(start, 0) + body.limit] ?? null;
  return { points: page.map((id) => ({ id, payload: pick(collection.points.get(id)!.payload, body.with_payload) })), next_page_offset: next };
}

function pick(payload: Record<string, unknown>, selector: unknown): Record<string, unknown> | null {
  if (selector === false) return null;
  if (!Array.isArray(selector)) return payload;
  return Object.fromEntries(selector.filter((key) => key in payload).map((key) => [key, payload[key]]));
}

function ok(response: ServerResponse, result: unknown): void {
  sendJson(response, 200, { status: 'ok', result, time: 0.0001 });
}

export function qdrantError(response: ServerResponse, status: number, error: string): void {
  sendJson(response, status, { status: { error }, time: 0.0001 });
}
