/**
 * The embedded store answers as Qdrant does: the same chunks (this repository's README and docs, chunked
 * and BM25-encoded by the real pipeline code, with a deterministic hashed dense vector) are loaded into
 * LanceDbStore and into a real Qdrant through QdrantStore, and for a set of questions, sparse only and
 * hybrid, with and without access groups, both return the same passages in the same order with the
 * same scores (the IDF-weighted BM25 score of a sparse query, the RRF score of a hybrid one).
 *
 * Qdrant comes from QDRANT_URL or a testcontainers container (see ../adapters/real-qdrant.ts); without
 * either the suite is skipped and says why.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import type { IndexedChunk, SearchHit } from '../../src/domain.ts';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import type { HybridQuery } from '../../src/stores/vector-store.ts';
import { realQdrantSkipReason, startRealQdrant, type RealQdrant } from '../adapters/real-qdrant.ts';

const skipReason = realQdrantSkipReason('qdrant-parity.test.ts');
if (skipReason) console.warn(skipReason);

const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const DIMENSION = 256;
const LOCK = { model: 'parity-hashed-words', dimension: DIMENSION };
/** Each document's groups by its position: public, hr, support, in turn. */
const GROUP_CYCLE: string[][] = [[], ['hr'], ['support']];
const QUESTIONS = [
  'how is the sparse vector built?',
  'what happens when I change the embedding model?',
  'what does the service answer when the reranker is down?',
  'prune guard refused too many deletions',
  'API keys rate limit per minute',
  'Qdrant collection payload index groups',
  'chunk size and overlap',
  'docling-serve converts PDF files',
  'SIGTERM shutdown drains requests',
  'Prometheus metrics for retrieval stages',
  'RAG_MODEL_MISMATCH',
  'GCS bucket prefix ingestion',
];
const CALLERS: Array<readonly string[]> = [[], ['hr'], ['hr', 'support']];

/**
 * A deterministic dense "model": the normalised sum of a pseudo-random DIMENSION-vector per word (seeded by
 * the word's FNV-1a hash). Every component is non-zero, so two chunks practically never tie in cosine: a
 * tie may come out in either order (Qdrant does not break ties), and the fused ranking would differ.
 */
const wordVectors = new Map<string, Float64Array>();
function wordVector(word: string): Float64Array {
  let vector = wordVectors.get(word);
  if (vector) return vector;
  let state = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) state = Math.imul(state ^ word.charCodeAt(i), 0x01000193);
  vector = new Float64Array(DIMENSION);
  for (let i = 0; i < DIMENSION; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0; // Numerical Recipes LCG
    vector[i] = state / 2 ** 32 - 0.5;
  }
  wordVectors.set(word, vector);
  return vector;
}

function hashedWords(text: string): number[] {
  const sum = new Array<number>(DIMENSION).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9_]+/g) ?? []) wordVector(word).forEach((x, i) => (sum[i]! += x));
  const norm = Math.hypot(...sum) || 1;
  return sum.map((x) => x / norm);
}

async function corpusChunks(): Promise<IndexedChunk[]> {
  const docs = (await readdir(join(repositoryRoot, 'docs'))).filter((name) => name.endsWith('.md')).sort();
  const sources = ['README.md', ...docs.map((name) => `docs/${name}`)];
  const chunks: IndexedChunk[] = [];
  for (const [position, source] of sources.entries()) {
    const markdown = await readFile(join(repositoryRoot, source), 'utf8');
    for (const chunk of chunkMarkdown(markdown, source, { chunkSize: 1200, chunkOverlap: 200 })) {
      chunks.push({ ...chunk, contentHash: `hash-${source}`, groups: GROUP_CYCLE[position % GROUP_CYCLE.length]!, dense: hashedWords(chunk.text), sparse: encodeDocument(chunk.text), ingestedAt: 'parity' });
    }
  }
  return chunks;
}

/** Scores equal up to f32 rounding (Qdrant computes in f32). */
function sameScore(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * Both rankings hold the same scores position by position, and the same ids within each run of equal
 * scores (Qdrant leaves ties in no particular order). A run reaching the limit may be cut differently,
 * so only its scores are compared.
 */
function expectSameRanking(embedded: SearchHit[], qdrant: SearchHit[], label: string): void {
  const show = (hits: SearchHit[]) => hits.map((hit) => `${hit.source}#${hit.chunkIndex} ${hit.score.toFixed(6)}`);
  expect(embedded.length, label).toBe(qdrant.length);
  embedded.forEach((hit, i) => expect(sameScore(hit.score, qdrant[i]!.score), `${label}: score at ${i}\n${show(embedded).join('\n')}\n---\n${show(qdrant).join('\n')}`).toBe(true));
  let start = 0;
  while (start < embedded.length) {
    let end = start + 1;
    while (end < embedded.length && sameScore(embedded[end]!.score, embedded[start]!.score)) end++;
    if (end < embedded.length || embedded.length < LIMIT) {
      const ids = (hits: SearchHit[]) => hits.slice(start, end).map((hit) => hit.id).sort();
      expect(ids(embedded), `${label}: passages at ${start}..${end - 1}\n${show(embedded).join('\n')}\n---\n${show(qdrant).join('\n')}`).toEqual(ids(qdrant));
    }
    start = end;
  }
}

const LIMIT = 10;

describe.skipIf(skipReason !== undefined)('the embedded store and a real Qdrant rank and score alike', () => {
  const collection = `rag-parity-${randomUUID()}`;
  let qdrant: RealQdrant | undefined;
  let dataDir = '';
  let embeddedStore: LanceDbStore;
  let qdrantStore: QdrantStore;
  let chunkCount = 0;

  beforeAll(async () => {
    qdrant = await startRealQdrant();
    dataDir = await mkdtemp(join(tmpdir(), 'rag-parity-'));
    embeddedStore = new LanceDbStore({ dataDir, collection });
    qdrantStore = new QdrantStore({ url: qdrant.url, apiKey: qdrant.apiKey, collection, minBackoffMs: 50 });
    const chunks = await corpusChunks();
    chunkCount = chunks.length;
    for (const store of [embeddedStore, qdrantStore]) {
      await store.open(LOCK);
      for (let i = 0; i < chunks.length; i += 100) await store.upsert(chunks.slice(i, i + 100));
    }
  }, 300_000);

  afterAll(async () => {
    await embeddedStore?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    if (qdrant) await new QdrantClient({ url: qdrant.url, apiKey: qdrant.apiKey, checkCompatibility: false }).deleteCollection(collection).catch(() => undefined);
    await qdrant?.stop();
  });

  it('holds the same chunks in both', async () => {
    expect(chunkCount).toBeGreaterThan(50);
    expect(await qdrantStore.count()).toBe(chunkCount);
    expect(await embeddedStore.count()).toBe(chunkCount);
  });

  /**
   * Tied BM25 scores in a sparse leg (within its prefetch limit, or across it) may come out in either
   * order, which moves the tied chunks' RRF scores: such questions are left out of the hybrid comparison
   * (the sparse comparison covers them). The dense vectors are built not to tie.
   */
  async function sparseLegTies(query: HybridQuery): Promise<boolean> {
    const leg = await embeddedStore.search({ ...query, dense: undefined, limit: query.prefetchLimit + 1, prefetchLimit: query.prefetchLimit + 1 });
    return leg.some((hit, i) => i > 0 && sameScore(hit.score, leg[i - 1]!.score));
  }

  for (const mode of ['sparse', 'hybrid'] as const) {
    it(`returns the same ${mode} rankings and scores for every question and caller`, async () => {
      const cases = QUESTIONS.flatMap((question) => CALLERS.map((visibleGroups) => ({ question, visibleGroups })));
      let compared = 0;
      for (const { question, visibleGroups } of cases) {
        const query: HybridQuery = { sparse: encodeQuery(question), limit: LIMIT, prefetchLimit: 30, visibleGroups, ...(mode === 'hybrid' ? { dense: hashedWords(question) } : {}) };
        if (mode === 'hybrid' && (await sparseLegTies(query))) continue;
        const [embedded, real] = await Promise.all([embeddedStore.search(query), qdrantStore.search(query)]);
        expect(real.length, `"${question}" finds passages`).toBeGreaterThan(0);
        expectSameRanking(embedded, real, `${mode} "${question}" as [${visibleGroups.join(', ')}]`);
        compared++;
      }
      console.info(`qdrant-parity: ${mode}: ${compared} of ${cases.length} question × caller cases compared`);
      expect(compared).toBeGreaterThanOrEqual(Math.ceil(cases.length / 2));
    });
  }
});
