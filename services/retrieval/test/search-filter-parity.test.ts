/**
 * Property: for random corpora (sources in folders, types, modified times, custom fields, some documents
 * indexed before metadata existed), random filters, random recency boosts and random caps, the embedded store and
 * Qdrant (the fake, which filters and evaluates the boost's formula with its own code written from Qdrant's docs
 * and source) return the same chunks with the same scores, and max_per_source then keeps the same hits (cases: ../../../packages/core/test/search-filter/random-filter-cases.ts). A glob goes to Qdrant resolved to the indexed sources
 * it matches (a facet on `source`), so this also checks that resolution.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capPerSource, QdrantStore, toFreshnessBoost, toSearchFilter } from '@rag/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LanceDbStore } from '../../../packages/core/src/stores/lancedb.ts';
import { encodeQuery } from '../../../packages/core/src/sparse/bm25-encoder.ts';
import { chunksOf, corpusArb, filterArb, freshnessArb, queryArb } from '../../../packages/core/test/search-filter/random-filter-cases.ts';
import { closeFakeServers, startFakeServer } from '../../../packages/core/test/adapters/fake-server.ts';
import { FakeQdrant } from './fakes/fake-qdrant.ts';

const LOCK = { model: 'parity-random', dimension: 4 };

const caseArb = fc.record({
  documents: corpusArb(8),
  // Most random filters keep nothing: half the cases have none, so that boosts and caps meet whole corpora.
  filter: fc.option(filterArb, { nil: undefined }),
  query: queryArb,
  hybrid: fc.boolean(),
  maxPerSource: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  freshness: freshnessArb,
});

let dataDir = '';
let qdrantUrl = '';
let run = 0;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-filter-parity-'));
  qdrantUrl = (await startFakeServer(new FakeQdrant().handle)).url;
});

afterAll(async () => {
  await closeFakeServers();
  await rm(dataDir, { recursive: true, force: true });
});

describe('search filters: the embedded store and Qdrant agree', () => {
  it('on random corpora, filters and caps', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (testCase) => {
        const collection = `c${run++}`;
        const lance = new LanceDbStore({ dataDir, collection });
        const qdrant = new QdrantStore({ url: qdrantUrl, collection });
        try {
          await lance.open(LOCK);
          await qdrant.open(LOCK);
          const chunks = chunksOf(testCase.documents);
          await lance.upsert(chunks);
          await qdrant.upsert(chunks);
          // Every chunk fits in the limit: the sets compare exactly, whatever ties there are.
          const query = {
            sparse: encodeQuery(testCase.query.join(' ')),
            dense: testCase.hybrid ? [0.5, -0.25, 0.75, 0.1] : undefined,
            limit: chunks.length,
            prefetchLimit: chunks.length,
            visibleGroups: [],
            filter: testCase.filter && toSearchFilter(testCase.filter),
            freshness: testCase.freshness && toFreshnessBoost(testCase.freshness.input, testCase.freshness.nowSeconds * 1000),
          };
          const [fromLance, fromQdrant] = await Promise.all([lance.search(query), qdrant.search(query)]);
          const byId = (hits: Array<{ id: string; score: number }>) => new Map(hits.map((hit) => [hit.id, hit.score]));
          expect([...byId(fromLance).keys()].sort()).toEqual([...byId(fromQdrant).keys()].sort());
          // Sparse scores, boosted or not, agree (the fake evaluates Qdrant's formula with its own code); hybrid ones
          // only as sets: LanceDB and the fake may order dense ties differently.
          if (!testCase.hybrid) for (const [id, score] of byId(fromLance)) expect(score).toBeCloseTo(byId(fromQdrant).get(id)!, 4);
          if (!testCase.hybrid && testCase.freshness) expect(fromLance.map((hit) => hit.score)).toEqual(fromQdrant.map((hit) => hit.score));
          const capped = (hits: Array<{ source: string }>) => capPerSource(hits, testCase.maxPerSource).map((hit) => hit.source).sort();
          expect(capped(fromLance)).toEqual(capped(fromQdrant));
        } finally {
          await lance.close();
          await qdrant.close();
        }
      }),
      { numRuns: 100 },
    );
  }, 120_000);
});
