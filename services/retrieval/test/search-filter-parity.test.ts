/**
 * Property: for random corpora (sources in folders, types, modified times, custom fields, some documents
 * indexed before metadata existed), random filters and random caps, the embedded store and Qdrant (the fake,
 * which filters with its own code written from Qdrant's filtering docs) return the same chunks with the same
 * scores, and max_per_source then keeps the same hits. Dense vectors are never zero: a zero vector's cosine is
 * undefined, and the stores differ on it whatever the filter. A glob goes to Qdrant resolved to the indexed sources
 * it matches (a facet on `source`), so this also checks that resolution.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capPerSource, QdrantStore, toSearchFilter } from '@rag/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkId } from '../../../packages/core/src/chunking/chunk-id.ts';
import type { IndexedChunk } from '../../../packages/core/src/domain.ts';
import { LanceDbStore } from '../../../packages/core/src/stores/lancedb.ts';
import { encodeDocument, encodeQuery } from '../../../packages/core/src/sparse/bm25-encoder.ts';
import { closeFakeServers, startFakeServer } from '../../../packages/core/test/adapters/fake-server.ts';
import { FakeQdrant } from './fakes/fake-qdrant.ts';

const LOCK = { model: 'parity-random', dimension: 4 };
const WORDS = ['deploy', 'rollback', 'sync', 'cluster', 'secret', 'token', 'webhook', 'health', 'login', 'project'];
const FOLDERS = ['docs', 'docs/operator-manual', 'docs/user-guide', 'hr'];
const NAMES = ['a', 'b', 'c', 'notes', 'faq'];
const TYPES = ['md', 'pdf', 'txt'];
const TIMES = [1_700_000_000, 1_750_000_000, 1_767_225_600, 1_780_000_000];
const TEAMS = ['platform', 'sre', 'docs'];

const metadataArb = fc.option(
  fc.record({
    modifiedAt: fc.option(fc.constantFrom(...TIMES), { nil: undefined }),
    meta: fc.dictionary(fc.constantFrom('team', 'tier'), fc.constantFrom(...TEAMS, 'gold', 'silver'), { maxKeys: 2 }),
  }),
  { nil: undefined, freq: 4 },
);

const documentArb = fc.record({
  folder: fc.constantFrom(...FOLDERS),
  name: fc.constantFrom(...NAMES),
  type: fc.constantFrom(...TYPES),
  metadata: metadataArb,
  chunks: fc.array(fc.record({ words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }), dense: fc.array(fc.double({ min: 0.05, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }) }), { minLength: 1, maxLength: 4 }),
});

const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString();
const filterArb = fc.record(
  {
    source: fc.constantFrom('docs/**', 'docs/*', 'docs/operator-manual/**', '**/*.md', 'hr/{a,b}.*', '**/faq.*', 'nothing/**'),
    type: fc.oneof(fc.constantFrom(...TYPES), fc.subarray(TYPES, { minLength: 1 })),
    modified_after: fc.constantFrom(...TIMES).map(isoOf),
    modified_before: fc.constantFrom(...TIMES).map(isoOf),
    meta: fc.dictionary(fc.constantFrom('team', 'tier'), fc.oneof(fc.constantFrom(...TEAMS, 'gold'), fc.subarray([...TEAMS, 'gold', 'silver'], { minLength: 1 })), { minKeys: 1, maxKeys: 2 }),
  },
  { requiredKeys: [] },
);

const caseArb = fc.record({
  documents: fc.uniqueArray(documentArb, { minLength: 1, maxLength: 8, selector: (d) => `${d.folder}/${d.name}.${d.type}` }),
  filter: filterArb,
  query: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
  hybrid: fc.boolean(),
  maxPerSource: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function chunksOf(documents: Case['documents']): IndexedChunk[] {
  return documents.flatMap((document) => {
    const source = `${document.folder}/${document.name}.${document.type}`;
    const metadata = document.metadata && { type: document.type, modifiedAt: document.metadata.modifiedAt, meta: document.metadata.meta };
    return document.chunks.map((chunk, chunkIndex) => {
      const text = chunk.words.join(' ');
      return { id: chunkId(source, chunkIndex), source, headingPath: '', chunkIndex, text, contentHash: 'h', groups: [], dense: chunk.dense, sparse: encodeDocument(text), ingestedAt: 'now', metadata };
    });
  });
}

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
            filter: toSearchFilter(testCase.filter),
          };
          const [fromLance, fromQdrant] = await Promise.all([lance.search(query), qdrant.search(query)]);
          const byId = (hits: Array<{ id: string; score: number }>) => new Map(hits.map((hit) => [hit.id, hit.score]));
          expect([...byId(fromLance).keys()].sort()).toEqual([...byId(fromQdrant).keys()].sort());
          if (!testCase.hybrid) for (const [id, score] of byId(fromLance)) expect(score).toBeCloseTo(byId(fromQdrant).get(id)!, 4);
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
