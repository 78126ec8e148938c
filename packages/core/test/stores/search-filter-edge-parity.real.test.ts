/**
 * Search filters checked against Qdrant's own engine: one random corpus (../search-filter/random-filter-cases.ts:
 * folders, types, modified times, custom fields, documents without metadata) goes into LanceDbStore, into
 * Qdrant Edge through QdrantStore (../real/qdrant-edge.ts: the engine's filter, range, nested-key, facet and
 * query code) and into the fake Qdrant; for 150 random filters, sparse only and hybrid, all three return the
 * same chunks, and the sparse scores agree; so do they with random recency boosts (Qdrant's formula query over the
 * RRF prefetch, evaluated by the engine). So the payload QdrantStore writes, the indexes it makes (keyword,
 * integer) and the filter it sends (a glob resolved by a facet) mean in Qdrant what the embedded store does.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexedChunk, SearchHit } from '../../src/domain.ts';
import { toSearchFilter } from '../../src/search-filter/search-controls.ts';
import { encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import type { VectorStore } from '../../src/stores/vector-store.ts';
import { FakeQdrant } from '../../../../services/retrieval/test/fakes/fake-qdrant.ts';
import { closeFakeServers, startFakeServer } from '../adapters/fake-server.ts';
import { realComponentSkipReason, venvPython } from '../real/real-components.ts';
import { startQdrantEdge, type QdrantEdgeServer } from '../real/qdrant-edge.ts';
import { chunksOf, corpusArb, filterArb, freshnessArb, queryArb } from '../search-filter/random-filter-cases.ts';
import { freshnessBonus, toFreshnessBoost, type FreshnessBoost } from '../../src/search-filter/freshness.ts';

const SUITE = 'search-filter-edge-parity.real.test.ts';
const python = venvPython('qdrant-edge');
const skipReason = realComponentSkipReason(SUITE, python ? undefined : 'the qdrant-edge Python environment (scripts/python-env.sh qdrant-edge) is missing');
const LOCK = { model: 'parity-random', dimension: 4 };
const SEED = 20261201;

describe.skipIf(skipReason !== undefined)('search filters: LanceDbStore against Qdrant Edge and the fake Qdrant', () => {
  const collection = 'rag-filter-parity';
  let edge: QdrantEdgeServer;
  let dataDir = '';
  let stores: VectorStore[] = [];
  let chunks: IndexedChunk[] = [];

  beforeAll(async () => {
    edge = await startQdrantEdge(python!);
    dataDir = await mkdtemp(join(tmpdir(), 'rag-filter-edge-'));
    stores = [
      new LanceDbStore({ dataDir, collection }),
      new QdrantStore({ url: edge.url, collection, retries: 0 }),
      new QdrantStore({ url: (await startFakeServer(new FakeQdrant().handle)).url, collection, retries: 0 }),
    ];
    const [corpus] = fc.sample(corpusArb(40, 25), { seed: SEED, numRuns: 1 });
    chunks = chunksOf(corpus!);
    for (const store of stores) {
      await store.open(LOCK);
      await store.upsert(chunks);
    }
  }, 120_000);

  afterAll(async () => {
    for (const store of stores) await store.close();
    await edge?.close();
    await closeFakeServers();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('returns the same chunks for random filters, with the same sparse scores', async () => {
    const cases = fc.sample(fc.record({ filter: filterArb, query: queryArb, hybrid: fc.boolean() }), { seed: SEED, numRuns: 150 });
    // Recency boosts over the same corpus, half of them without a filter (most filters keep nothing).
    const boosted = fc.sample(fc.record({ filter: fc.option(filterArb, { nil: undefined }), query: queryArb, hybrid: fc.boolean(), freshness: freshnessArb.filter((f) => f !== undefined) }), {
      seed: SEED,
      numRuns: 150,
    });
    let nonEmpty = 0;
    let boostedSparse = 0;
    for (const { filter, query: words, hybrid, freshness } of [...cases, ...boosted] as Array<(typeof boosted)[number]>) {
      const query = {
        sparse: encodeQuery(words.join(' ')),
        dense: hybrid ? [0.5, 0.25, 0.75, 0.1] : undefined,
        limit: chunks.length,
        prefetchLimit: chunks.length,
        visibleGroups: [],
        filter: filter && toSearchFilter(filter),
        freshness: freshness && toFreshnessBoost(freshness.input, freshness.nowSeconds * 1000),
      };
      const [embedded, qdrant, fake] = await Promise.all(stores.map((store) => store.search(query)));
      const ids = (hits: SearchHit[]) => hits.map((hit) => hit.id).sort();
      const what = JSON.stringify({ filter, words, hybrid, freshness });
      expect(ids(embedded!), what).toEqual(ids(qdrant!));
      expect(ids(fake!), what).toEqual(ids(qdrant!));
      if (!hybrid && !query.freshness) {
        const scores = new Map(qdrant!.map((hit) => [hit.id, hit.score]));
        for (const hit of embedded!) expect(hit.score, what).toBeCloseTo(scores.get(hit.id)!, 4);
      }
      if (!hybrid && query.freshness) {
        // Boosted: RRF over the sparse ranking plus the bonus. Qdrant orders tied BM25 scores as it likes, so a
        // tied chunk's rank score may be any of its tie group's; each store's score must lie in that span.
        const plain = await stores[0]!.search({ ...query, freshness: undefined });
        for (const hits of [embedded!, qdrant!, fake!]) expectBoostedWithinTies(hits, plain, query.freshness, what);
      }
      if (embedded!.length > 0) nonEmpty += 1;
      if (embedded!.length > 0 && query.freshness && !hybrid) boostedSparse += 1;
    }
    // Most random filters of several fields keep nothing: enough cases must keep some, boosted sparse ones too.
    expect(nonEmpty).toBeGreaterThan(30);
    expect(boostedSparse).toBeGreaterThan(10);
    console.log(`search-filter-edge-parity: ${nonEmpty} of ${cases.length + boosted.length} cases returned chunks, ${boostedSparse} of them boosted sparse-only ones with scores checked`);
  }, 300_000);
});

/** Each hit's score is 1/(position + 2) + its bonus, for some position its BM25 score shares in `plain` (ties). */
function expectBoostedWithinTies(hits: SearchHit[], plain: SearchHit[], boost: FreshnessBoost, what: string): void {
  const positions = new Map<number, number[]>();
  plain.forEach((hit, position) => positions.set(Math.fround(hit.score), [...(positions.get(Math.fround(hit.score)) ?? []), position]));
  const plainScore = new Map(plain.map((hit) => [hit.id, Math.fround(hit.score)]));
  const modifiedAt = new Map(plain.map((hit) => [hit.id, hit.modifiedAt]));
  for (const hit of hits) {
    const tied = positions.get(plainScore.get(hit.id)!)!;
    const bonus = freshnessBonus(boost, modifiedAt.get(hit.id));
    const [high, low] = [1 / (Math.min(...tied) + 2) + bonus, 1 / (Math.max(...tied) + 2) + bonus];
    expect(hit.score, `${what} ${hit.id}`).toBeGreaterThanOrEqual(low - 1e-5);
    expect(hit.score, `${what} ${hit.id}`).toBeLessThanOrEqual(high + 1e-5);
  }
}
