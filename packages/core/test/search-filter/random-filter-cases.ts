/**
 * Random corpora and search filters for the stores' parity tests: sources in nested folders of three types,
 * modified times and custom fields drawn from small sets (so that filters hit their boundaries: after is
 * inclusive, before exclusive) or anywhere around them, some documents without metadata (indexed before it
 * existed), filters of any subset of fields, and recency boosts. Dense vectors are never zero: a zero vector's cosine is undefined.
 */
import fc from 'fast-check';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import type { IndexedChunk } from '../../src/domain.ts';
import { encodeDocument } from '../../src/sparse/bm25-encoder.ts';

export const WORDS = ['deploy', 'rollback', 'sync', 'cluster', 'secret', 'token', 'webhook', 'health', 'login', 'project'];
const FOLDERS = ['docs', 'docs/operator-manual', 'docs/user-guide', 'hr'];
const NAMES = ['a', 'b', 'c', 'notes', 'faq'];
const TYPES = ['md', 'pdf', 'txt'];
const TIMES = [1_700_000_000, 1_750_000_000, 1_767_225_600, 1_780_000_000];
const TEAMS = ['platform', 'sre', 'docs'];
const TITLES = ['Deploy guide', 'Rollback FAQ', 'CI/CD notes', 'Team handbook'];

const metadataArb = fc.option(
  fc.record({
    // The filters' boundaries, or any time around them (what a freshness boost decays over).
    modifiedAt: fc.option(fc.oneof(fc.constantFrom(...TIMES), fc.integer({ min: TIMES[0]! - 5_000_000, max: TIMES.at(-1)! + 5_000_000 })), { nil: undefined }),
    meta: fc.dictionary(fc.constantFrom('team', 'tier'), fc.constantFrom(...TEAMS, 'gold', 'silver'), { maxKeys: 2 }),
    title: fc.option(fc.constantFrom(...TITLES), { nil: undefined }),
  }),
  { nil: undefined, freq: 4 },
);

const documentArb = fc.record({
  folder: fc.constantFrom(...FOLDERS),
  name: fc.constantFrom(...NAMES),
  type: fc.constantFrom(...TYPES),
  metadata: metadataArb,
  chunks: fc.array(
    fc.record({
      words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }),
      dense: fc.array(fc.double({ min: 0.05, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }),
    }),
    { minLength: 1, maxLength: 4 },
  ),
});

export const corpusArb = (maxDocuments: number, minDocuments = 1) =>
  fc.uniqueArray(documentArb, { minLength: minDocuments, maxLength: maxDocuments, selector: (d) => `${d.folder}/${d.name}.${d.type}` });
export type RandomCorpus = typeof documentArb extends fc.Arbitrary<infer T> ? T[] : never;

const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString();
export const filterArb = fc.record(
  {
    source: fc.constantFrom('docs/**', 'docs/*', 'docs/operator-manual/**', '**/*.md', 'hr/{a,b}.*', '**/faq.*', 'nothing/**'),
    title: fc.constantFrom('*guide*', '*faq', 'ci/cd*', 'team ?andbook', 'nothing*'),
    type: fc.oneof(fc.constantFrom(...TYPES), fc.subarray(TYPES, { minLength: 1 })),
    modified_after: fc.constantFrom(...TIMES).map(isoOf),
    modified_before: fc.constantFrom(...TIMES).map(isoOf),
    meta: fc.dictionary(fc.constantFrom('team', 'tier'), fc.oneof(fc.constantFrom(...TEAMS, 'gold'), fc.subarray([...TEAMS, 'gold', 'silver'], { minLength: 1 })), { minKeys: 1, maxKeys: 2 }),
  },
  { requiredKeys: [] },
);

/** A recency boost (the request's `freshness`) at a random time around the corpus's, or none. */
export const freshnessArb = fc.option(
  fc.record({
    input: fc.record({ half_life_days: fc.double({ min: 0.5, max: 400, noNaN: true }), weight: fc.double({ min: 0.01, max: 1, noNaN: true }) }, { requiredKeys: [] }),
    nowSeconds: fc.integer({ min: TIMES[0]!, max: TIMES.at(-1)! + 10_000_000 }),
  }),
  { nil: undefined },
);

export const queryArb = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 });

export function chunksOf(documents: RandomCorpus): IndexedChunk[] {
  return documents.flatMap((document) => {
    const source = `${document.folder}/${document.name}.${document.type}`;
    const metadata = document.metadata && { type: document.type, modifiedAt: document.metadata.modifiedAt, meta: document.metadata.meta, title: document.metadata.title };
    return document.chunks.map((chunk, chunkIndex) => {
      const text = chunk.words.join(' ');
      return { id: chunkId(source, chunkIndex), source, headingPath: '', chunkIndex, text, contentHash: 'h', groups: [], dense: chunk.dense, sparse: encodeDocument(text), ingestedAt: 'now', metadata };
    });
  });
}
