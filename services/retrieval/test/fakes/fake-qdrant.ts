/**
 * An in-memory Qdrant speaking the REST API that @qdrant/js-client-rest calls, and nothing more:
 * collection get/create, payload indexes (listed in `payload_schema`), upsert, delete (ids or filter),
 * set payload (ids or filter), scroll (with a filter), count and the Query API (one sparse query, dense + bm25
 * prefetches fused by RRF, or a score-boosting formula over such a fusion), each with Qdrant's filters: must / should / must_not, `match` (value, any,
 * except), `range` (gt, gte, lt, lte on numbers), `is_empty`, `is_null`, `has_id`, keys nested with dots
 * (`meta.team`); an unknown condition is a 400, as a typo is in Qdrant. Facets (POST /facet) count a key's values.
 * Filtering is written here from Qdrant's documentation, not borrowed from the production code:
 * https://qdrant.tech/documentation/concepts/filtering/ . As Qdrant's query planner does, the root filter
 * of a query with prefetches is merged into every prefetch and nowhere else: the fused result is not
 * filtered again (see `legFilter`); IDF is always the whole collection's, filter or not.
 * Answers use Qdrant's envelope `{status: "ok", result, time}`, errors `{status: {error}, time}`.
 * https://api.qdrant.tech/api-reference
 *
 * Scoring is Qdrant's, written here from Qdrant's documentation and source and never imported from the
 * code under test (the embedded store fuses and scores with packages/core, so sharing it would let a bug
 * in one hide in both): cosine for `dense`; for `bm25` (modifier idf) Σ idf(i)·q_i·d_i with
 * idf = ln((N − n + 0.5)/(n + 0.5) + 1) (https://qdrant.tech/documentation/concepts/indexing/#idf-modifier);
 * fusion is RRF, see `rrfFusion` below.
 */
import type { ServerResponse } from 'node:http';
import { sendJson, type RecordedRequest } from '../../../../packages/core/test/adapters/fake-server.ts';

interface SparseVector {
  indices: number[];
  values: number[];
}
interface Point {
  id: string;
  dense?: number[];
  sparse?: SparseVector;
  payload: Record<string, unknown>;
}

interface Collection {
  config: Record<string, unknown>;
  points: Map<string, Point>;
  /** field name → field_schema, from PUT /collections/{c}/index. */
  payloadIndexes: Map<string, string>;
}

interface Prefetch {
  query: number[] | SparseVector;
  using: string;
  limit: number;
  filter?: Filter | undefined;
}

interface Filter {
  must?: Condition[] | Condition;
  should?: Condition[] | Condition;
  must_not?: Condition[] | Condition;
}

type Condition = Record<string, any>;

class BadFilter extends Error {}

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
    'PUT /index': (name, body, res) => this.withCollection(name, res, (c) => createIndex(c, body)),
    'PUT /points': (name, body, res) => this.withCollection(name, res, (c) => this.upsert(c, body)),
    'POST /points/delete': (name, body, res) => this.withCollection(name, res, (c) => this.delete(c, body)),
    'POST /points/payload': (name, body, res) => this.withCollection(name, res, (c) => setPayload(c, body)),
    'POST /points': (name, body, res) => this.withCollection(name, res, (c) => retrieve(c, body)),
    'POST /points/scroll': (name, body, res) => this.withCollection(name, res, (c) => scroll(c, body)),
    'POST /points/count': (name, _body, res) => this.withCollection(name, res, (c) => ({ count: c.points.size })),
    'POST /points/query': (name, body, res) => this.withCollection(name, res, (c) => this.query(c, body)),
    'POST /facet': (name, body, res) => this.withCollection(name, res, (c) => facet(c, body)),
  };

  /** The fake-server handler. */
  handle = (request: RecordedRequest, response: ServerResponse): void => {
    const { pathname } = new URL(request.path, 'http://qdrant');
    const match = /^\/collections\/([^/]+)(\/.*)?$/.exec(pathname);
    const route = match ? this.routes[`${request.method} ${match[2] ?? ''}`] : undefined;
    if (!match || !route) return qdrantError(response, 404, `Not found: ${request.method} ${pathname}`);
    try {
      route(decodeURIComponent(match[1]!), request.body, response);
    } catch (error) {
      if (!(error instanceof BadFilter)) throw error;
      qdrantError(response, 400, `Bad request: ${error.message}`);
    }
  };

  /** The payload of every point of a document, in chunk order: what a test asserts a sync wrote. */
  payloadsOf(source: string, collection = 'docs-v2'): Array<Record<string, unknown>> {
    const points = [...(this.collections.get(collection)?.points.values() ?? [])].filter((point) => point.payload.source === source);
    return points.map((point) => point.payload).sort((a, b) => Number(a.chunk_index) - Number(b.chunk_index));
  }

  private getCollection(name: string, response: ServerResponse): void {
    const collection = this.collections.get(name);
    if (!collection) return qdrantError(response, 404, `Not found: Collection \`${name}\` doesn't exist!`);
    const payloadSchema = Object.fromEntries(
      [...collection.payloadIndexes].map(([field, schema]) => [field, { data_type: schema, points: [...collection.points.values()].filter((p) => p.payload[field] !== undefined).length }]),
    );
    ok(response, { status: 'green', optimizer_status: 'ok', points_count: collection.points.size, config: collection.config, payload_schema: payloadSchema });
  }

  private createCollection(name: string, body: any, response: ServerResponse): void {
    if (this.collections.has(name)) return qdrantError(response, 409, `Wrong input: Collection \`${name}\` already exists!`);
    const params = { ...(body.vectors ? { vectors: body.vectors } : {}), sparse_vectors: body.sparse_vectors };
    this.collections.set(name, { config: { params, ...(body.metadata ? { metadata: body.metadata } : {}) }, points: new Map(), payloadIndexes: new Map() });
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
    for (const point of selectedPoints(collection, body)) collection.points.delete(point.id);
    return { operation_id: 2, status: 'completed' };
  }

  private query(collection: Collection, body: any) {
    this.queries.push(body);
    const points = [...collection.points.values()];
    const rootFilter: Filter | undefined = body.filter;
    const ranked = body.query?.formula
      ? rescore(points, body.prefetch, rootFilter, body.query)
      : body.prefetch
        ? fuse(points, body.prefetch as Prefetch[], rootFilter, rrfParameters(body.query, body.prefetch.length))
        : rank(points, { query: body.query, using: body.using, limit: body.limit, filter: rootFilter });
    const answer = { points: ranked.slice(0, body.limit).map(({ point, score }) => ({ id: point.id, version: 1, score, payload: point.payload })) };
    this.answers.push(answer);
    return answer;
  }
}

/**
 * A score-boosting formula query (Qdrant ≥ 1.14) over one fusion prefetch: the prefetch's points (its nested legs
 * fused by RRF, `limit` of them; the root filter goes down to the legs) each scored by the formula, best first.
 * https://qdrant.tech/documentation/search/search-relevance/#score-boosting
 */
function rescore(points: Point[], prefetches: any, rootFilter: Filter | undefined, query: { formula: unknown; defaults?: Record<string, unknown> }): Array<{ point: Point; score: number }> {
  const [fused, ...others] = Array.isArray(prefetches) ? prefetches : [prefetches];
  if (!fused?.prefetch || others.length > 0) throw new BadFilter('this fake takes a formula over exactly one fusion prefetch');
  const candidates = fuse(points, fused.prefetch as Prefetch[], legFilter(rootFilter, fused.filter), rrfParameters(fused.query, fused.prefetch.length)).slice(0, fused.limit);
  return candidates
    .map(({ point, score }) => ({ point, score: Math.fround(evaluateFormula(query.formula, { score, payload: point.payload, defaults: query.defaults ?? {} })) }))
    .sort((a, b) => b.score - a.score);
}

/**
 * Qdrant's formula evaluation, from its docs and lib/segment/src/index/query_optimization/rescore_formula/
 * (formula_scorer.rs, parsed_formula.rs): numbers are constants, `$score` the prefetch's score, any other string a
 * payload key whose value must be a number (else `defaults`, else an error); `sum`, `mult`; `exp_decay` is
 * exp(ln(midpoint) / scale · |x − target|) with midpoint 0.5, scale 1 and target 0 by default. Arithmetic in f64,
 * the result rounded to f32. Only what the tests need: anything else is a 400.
 */
function evaluateFormula(expression: unknown, point: { score: number; payload: Record<string, unknown>; defaults: Record<string, unknown> }): number {
  const evaluate = (e: unknown) => evaluateFormula(e, point);
  // The REST API parses formula constants as f32 (`Expression::Constant(f32)`, lib/api/src/rest/schema.rs).
  if (typeof expression === 'number') return Math.fround(expression);
  if (expression === '$score') return point.score;
  if (typeof expression === 'string') {
    const value = valuesOf({ id: '', payload: point.payload }, expression)[0] ?? point.defaults[expression];
    if (typeof value !== 'number') throw new BadFilter(`Wrong input: variable "${expression}" is not a number and has no default`);
    return value;
  }
  const node = expression as Record<string, any>;
  if (Array.isArray(node.sum)) return node.sum.reduce((total: number, term: unknown) => total + evaluate(term), 0);
  if (Array.isArray(node.mult)) return node.mult.reduce((product: number, term: unknown) => product * evaluate(term), 1);
  if (node.exp_decay) {
    const { x, target = 0, scale = 1, midpoint = 0.5 } = node.exp_decay;
    if (!(scale > 0) || !(midpoint > 0 && midpoint < 1)) throw new BadFilter('Wrong input: decay scale must be > 0 and midpoint in (0, 1)');
    // The REST API reads scale and midpoint as f32.
    const lambda = Math.log(Math.fround(midpoint)) / Math.fround(scale);
    return Math.exp(lambda * Math.abs(evaluate(x) - evaluate(target)));
  }
  throw new BadFilter(`unsupported formula expression ${JSON.stringify(expression)}`);
}

function fuse(points: Point[], prefetches: Prefetch[], rootFilter: Filter | undefined, rrf: RrfParameters): Array<{ point: Point; score: number }> {
  const legs = prefetches.map((prefetch) => rank(points, { ...prefetch, filter: legFilter(rootFilter, prefetch.filter) }).map(({ point }) => point));
  return rrfFusion(legs, rrf.k, rrf.weights);
}

/** Qdrant's `DEFAULT_RRF_K`: `{fusion: "rrf"}` uses 2, not the literature's 60; `{rrf: {k}}` (Qdrant ≥ 1.16) sets it. */
export const QDRANT_DEFAULT_RRF_K = 2;

/**
 * Qdrant's server-side Reciprocal Rank Fusion (`rrf_scoring`): a point scores Σ over the legs it appears
 * in of `position_score` = 1 / ((position + 1) / weight + k − 1), position 0-based, weight 1 unless the
 * query gives `weights` (Qdrant ≥ 1.17; 0 or less: nothing), so 1 / (position + k) at weight 1; a leg's
 * own scores are ignored. Qdrant's scores are f32: each step and each running sum is rounded to f32, so a
 * point first in both of two legs scores 1.0 and one at positions 0, 1 and 2 of three legs
 * 0.5 + 0.33333334 + 0.25 = 1.0833334.
 * https://qdrant.tech/documentation/concepts/hybrid-queries/#reciprocal-rank-fusion-rrf
 * https://github.com/qdrant/qdrant/blob/master/lib/segment/src/common/reciprocal_rank_fusion.rs
 * Qdrant sorts by score only (ties come out in hash-map order); the fake breaks ties by id so tests are
 * deterministic.
 */
export function rrfFusion<T extends { id: string }>(
  legs: readonly (readonly T[])[],
  k: number = QDRANT_DEFAULT_RRF_K,
  weights?: readonly number[],
): Array<{ point: T; score: number }> {
  const fused = new Map<string, { point: T; score: number }>();
  for (const [legIndex, leg] of legs.entries()) {
    const weight = weights?.[legIndex] ?? 1;
    for (let position = 0; position < leg.length; position++) {
      const point = leg[position]!;
      const contribution = positionScore(position, k, weight);
      const entry = fused.get(point.id);
      if (entry) entry.score = Math.fround(entry.score + contribution);
      else fused.set(point.id, { point, score: contribution });
    }
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.point.id < b.point.id ? -1 : a.point.id > b.point.id ? 1 : 0));
}

function positionScore(position: number, k: number, weight: number): number {
  if (weight <= 0) return 0;
  const f32 = Math.fround;
  return f32(1 / f32(f32(f32(f32(position + 1) / f32(weight)) + k) - 1));
}

interface RrfParameters {
  k: number;
  weights?: number[] | undefined;
}

/**
 * The k and weights of a fusion query: `{fusion: "rrf"}` or `{rrf: {k, weights}}`; anything else, or
 * weights not one per prefetch, is a 400, as in Qdrant.
 */
function rrfParameters(query: any, prefetches: number): RrfParameters {
  if (query?.fusion === 'rrf') return { k: QDRANT_DEFAULT_RRF_K };
  if (!query?.rrf || typeof query.rrf !== 'object') throw new BadFilter(`unsupported fusion query ${JSON.stringify(query)}`);
  const weights: number[] | undefined = query.rrf.weights;
  if (weights && weights.length !== prefetches) throw new BadFilter(`Number of weights in RRF should match number of pre-fetches: got ${weights.length}, expected ${prefetches}`);
  return { k: query.rrf.k ?? QDRANT_DEFAULT_RRF_K, weights };
}

/**
 * One leg: the `limit` best points matching the filter for a dense or sparse query; a sparse leg only
 * returns points sharing a term. The sparse IDF counts every point of the collection, filtered out or not.
 */
function rank(points: Point[], prefetch: Prefetch): Array<{ point: Point; score: number }> {
  const score = prefetch.using === 'dense' ? denseScorer(prefetch.query as number[]) : sparseScorer(points, prefetch.query as SparseVector);
  return points
    .filter((point) => matchesFilter(point, prefetch.filter))
    .map((point) => ({ point, score: score(point) }))
    .filter(({ score: s }) => s !== undefined && (prefetch.using === 'dense' || s > 0))
    .map(({ point, score: s }) => ({ point, score: s! }))
    .sort((a, b) => b.score - a.score || (a.point.id < b.point.id ? -1 : 1))
    .slice(0, prefetch.limit);
}

function denseScorer(query: number[]): (point: Point) => number | undefined {
  return (point) => (point.dense ? cosine(query, point.dense) : undefined);
}

/** N counts the points whose sparse vector holds a term: Qdrant's `indexed_vectors` leaves empty ones out. */
function sparseScorer(points: Point[], query: SparseVector): (point: Point) => number | undefined {
  const withSparse = points.filter((point) => point.sparse && point.sparse.indices.length > 0);
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

/**
 * The filter a prefetch runs with: Qdrant's planner merges the root filter into each prefetch
 * ("Filters are propagated into the leaves", `Filter::merge_opts` in lib/shard/src/query/planned_query.rs)
 * and `Filter::merge_owned` concatenates the clause lists kind by kind. So two `must` lists AND, but two
 * `should` lists become one: `root.should OR prefetch.should`, not both. Checked against Qdrant Edge
 * 0.9.0 (the server's query code) by fake-qdrant.test.ts's numbers.
 * https://github.com/qdrant/qdrant/blob/master/lib/segment/src/types.rs (Filter::merge_owned)
 */
function legFilter(root: Filter | undefined, prefetch: Filter | undefined): Filter | undefined {
  if (!root || !prefetch) return root ?? prefetch;
  const merged = (kind: keyof Filter) => {
    const both = [...asList(root[kind]), ...asList(prefetch[kind])];
    return both.length > 0 ? { [kind]: both } : {};
  };
  return { ...merged('must'), ...merged('should'), ...merged('must_not') };
}

function asList(conditions: Condition[] | Condition | undefined): Condition[] {
  return conditions === undefined ? [] : Array.isArray(conditions) ? conditions : [conditions];
}

/** must: all hold; should: at least one holds (when any is given); must_not: none holds. No filter matches all. */
function matchesFilter(point: Point, filter: Filter | undefined): boolean {
  if (!filter) return true;
  const should = asList(filter.should);
  return (
    asList(filter.must).every((condition) => matchesCondition(point, condition)) &&
    (should.length === 0 || should.some((condition) => matchesCondition(point, condition))) &&
    !asList(filter.must_not).some((condition) => matchesCondition(point, condition))
  );
}

/**
 * The stored values of a key: an array's items, a single value as one item, nothing for a missing key or null.
 * A dotted key walks into objects ("Nested key", https://qdrant.tech/documentation/concepts/filtering/#nested-key).
 */
function valuesOf(point: Point, key: string): unknown[] {
  let values: unknown[] = [point.payload];
  for (const part of key.split('.')) {
    values = values.flatMap((value) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? [(value as Record<string, unknown>)[part]] : []));
    values = values.flatMap((value) => (value === undefined || value === null ? [] : Array.isArray(value) ? value : [value]));
  }
  return values;
}

/** `range`: numbers only ("a range condition on string data gives an empty output"); one value in range is enough. */
function inRange(values: unknown[], range: Record<string, unknown>): boolean {
  const bound = (name: string) => (typeof range[name] === 'number' ? (range[name] as number) : undefined);
  const [gt, gte, lt, lte] = ['gt', 'gte', 'lt', 'lte'].map(bound);
  return values.some(
    (value) =>
      typeof value === 'number' && (gt === undefined || value > gt) && (gte === undefined || value >= gte) && (lt === undefined || value < lt) && (lte === undefined || value <= lte),
  );
}

/**
 * POST /collections/{c}/facet: each value of `key` among the points matching `filter`, with how many points
 * hold it, most frequent first (ties by value), at most `limit` (default 10). https://api.qdrant.tech/api-reference/points/facet
 */
function facet(collection: Collection, body: any) {
  const counts = new Map<unknown, number>();
  for (const point of collection.points.values()) {
    if (!matchesFilter(point, body.filter)) continue;
    for (const value of new Set(valuesOf(point, body.key))) counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  const hits = [...counts].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || String(a.value).localeCompare(String(b.value)));
  return { hits: hits.slice(0, body.limit ?? 10) };
}

function matchesCondition(point: Point, condition: Condition): boolean {
  if ('must' in condition || 'should' in condition || 'must_not' in condition) return matchesFilter(point, condition as Filter);
  // "field either does not exist, or has null or [] value"
  if ('is_empty' in condition) return valuesOf(point, condition.is_empty.key).length === 0;
  if ('is_null' in condition) return point.payload[condition.is_null.key] === null;
  if ('has_id' in condition) return (condition.has_id as unknown[]).map(String).includes(point.id);
  if (typeof condition.key === 'string' && condition.range) return inRange(valuesOf(point, condition.key), condition.range);
  if (typeof condition.key === 'string' && condition.match) {
    const values = valuesOf(point, condition.key);
    const match = condition.match;
    // "If several values are stored, at least one of them should match the condition."
    if ('value' in match) return values.includes(match.value);
    if ('any' in match) return values.some((value) => (match.any as unknown[]).includes(value));
    if ('except' in match) return values.some((value) => !(match.except as unknown[]).includes(value));
  }
  throw new BadFilter(`unsupported filter condition ${JSON.stringify(condition)}`);
}

/** The points a write names: `points` (ids) or `filter`. */
function selectedPoints(collection: Collection, body: any): Point[] {
  if (Array.isArray(body.points)) return body.points.map((id: unknown) => collection.points.get(String(id))).filter((point: Point | undefined): point is Point => point !== undefined);
  if (body.filter) return [...collection.points.values()].filter((point) => matchesFilter(point, body.filter));
  throw new BadFilter('either points or filter is required');
}

/** POST /points/payload: merges the given keys into each selected point's payload (set_payload, not overwrite). */
function setPayload(collection: Collection, body: any) {
  for (const point of selectedPoints(collection, body)) point.payload = { ...point.payload, ...body.payload };
  return { operation_id: 3, status: 'completed' };
}

/**
 * PUT /index: the field and its schema show in GET /collections/{c}'s payload_schema from then on. A schema name
 * Qdrant does not know is a 400 (keyword, integer, float, bool, geo, datetime, text, uuid:
 * https://qdrant.tech/documentation/manage-data/indexing/#payload-index).
 */
const PAYLOAD_SCHEMAS = ['keyword', 'integer', 'float', 'bool', 'geo', 'datetime', 'text', 'uuid'];
function createIndex(collection: Collection, body: any) {
  if (typeof body?.field_schema === 'string' && !PAYLOAD_SCHEMAS.includes(body.field_schema)) throw new BadFilter(`Format error in JSON body: unknown variant \`${body.field_schema}\``);
  if (body?.field_name) collection.payloadIndexes.set(body.field_name, body.field_schema);
  return { operation_id: 0, status: 'completed' };
}

/** Pages in id order; `offset` is the first id of the page, `next_page_offset` the first of the next. */
/** POST /collections/{name}/points: the points with these ids, missing ones left out. */
function retrieve(collection: Collection, body: any) {
  const points = (body.ids as unknown[]).flatMap((id) => {
    const point = collection.points.get(String(id));
    return point ? [{ id: point.id, payload: pick(point.payload, body.with_payload) }] : [];
  });
  return points;
}

function scroll(collection: Collection, body: any) {
  const ids = [...collection.points.values()].filter((point) => matchesFilter(point, body.filter)).map((point) => point.id).sort();
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
