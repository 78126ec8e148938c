/**
 * The embedded store answers as Qdrant does, checked against Qdrant's own engine: a few hundred chunks of
 * real documentation (../shared/corpora, chunked, embedded with the Model2Vec test model and BM25-encoded
 * by the ingest code) go into LanceDbStore and, through QdrantStore, into Qdrant Edge (the server's segment
 * and query code, ../real/qdrant-edge.ts). For several hundred queries per mode, sparse only, dense only
 * (a question of stopwords: the dense leg alone, fused) and hybrid RRF, as callers with and without groups,
 * both stores return the same chunks in the same order with the same scores (ties compared as sets).
 * Then documents are deleted and a document's groups changed, as a sync does, and every query runs again.
 *
 * QdrantStore's requests reach the engine unchanged (collection config, keyword indexes, visibility filter
 * in the prefetches and at the root, `{fusion: "rrf"}`), so this also checks the adapter against Qdrant.
 * The same requests also go to the fake Qdrant the production-path tests use, which must answer as the
 * engine does.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import type { Chunk, IndexedChunk, SearchHit } from '../../src/domain.ts';
import { Model2VecEmbedder } from '../../src/embedders/model2vec.ts';
import type { RrfParameters } from '../../src/fusion/rrf.ts';
import { vectorizeChunks } from '../../src/pipeline/index-document.ts';
import { encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { QdrantStore } from '../../src/stores/qdrant.ts';
import type { HybridQuery, VectorStore } from '../../src/stores/vector-store.ts';
import { FakeQdrant } from '../../../../services/retrieval/test/fakes/fake-qdrant.ts';
import { closeFakeServers, startFakeServer } from '../adapters/fake-server.ts';
import { realComponentSkipReason, repositoryRoot, venvPython } from '../real/real-components.ts';
import { startQdrantEdge, type QdrantEdgeServer } from '../real/qdrant-edge.ts';

const SUITE = 'qdrant-edge-parity.real.test.ts';
const shared = join(repositoryRoot, '..', 'shared');
const CORPORA = [join(shared, 'corpora', 'vllm-gke'), join(shared, 'corpora', 'argo-cd-docs', 'docs', 'operator-manual')];
const MODEL = join(shared, 'models', 'model2vec-test-bge-base-vq');
const python = venvPython('qdrant-edge');
const missingPath = [...CORPORA, MODEL].find((path) => !existsSync(path));
const skipReason = realComponentSkipReason(
  SUITE,
  !python ? 'the qdrant-edge Python environment (scripts/python-env.sh qdrant-edge) is missing' : missingPath && `${missingPath} is missing`,
);

/** Each document's groups by its position: public, hr, support, both, in turn. */
const GROUP_CYCLE: string[][] = [[], ['hr'], ['support'], ['hr', 'support']];
const CALLERS: Array<readonly string[]> = [[], ['hr'], ['hr', 'support']];
/** Enough for IDF and ties to behave as in a real collection; Model2Vec embeds ~15 chunks a second here. */
const CORPUS_CHUNKS = 400;
const LIMIT = 10;
/** What the retriever asks for: limit 10 without a reranker (prefetch 20), 50 rerank candidates. */
const SHAPES = [
  { limit: LIMIT, prefetchLimit: 20 },
  { limit: LIMIT, prefetchLimit: 50 },
];
/** Leaves the sparse query empty: the search is the dense leg alone, fused. */
const STOPWORDS_ONLY = { indices: [], values: [] };

type Mode = 'sparse' | 'dense' | 'hybrid' | 'weighted';

/**
 * Weighted RRF and other k (RRF_K, FUSION_WEIGHTS): QdrantStore sends `{rrf: {k, weights}}` (Qdrant ≥ 1.17,
 * https://api.qdrant.tech/api-reference/search/query-points), the embedded store fuses with Qdrant's
 * formula; each question of the weighted mode takes the next of these in turn.
 */
const WEIGHTED: RrfParameters[] = [
  { k: 2, weights: { dense: 3, sparse: 1 } },
  { k: 2, weights: { dense: 1, sparse: 0.5 } },
  { k: 60, weights: { dense: 1, sparse: 2 } },
];

async function markdownFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** The corpus as the ingest writes it: chunks with the document's groups, dense and sparse vectors. */
async function corpusChunks(embedder: Model2VecEmbedder): Promise<IndexedChunk[]> {
  const files = (await Promise.all(CORPORA.map(markdownFiles))).flat();
  const chunks: IndexedChunk[] = [];
  for (const [position, file] of files.entries()) {
    if (chunks.length >= CORPUS_CHUNKS) break;
    const source = relative(shared, file);
    const pieces = chunkMarkdown(await readFile(file, 'utf8'), source, { chunkSize: 1200, chunkOverlap: 200 });
    const version = { contentHash: `hash-${position}`, groups: GROUP_CYCLE[position % GROUP_CYCLE.length]! };
    chunks.push(...(await vectorizeChunks(pieces, version, embedder, 64, () => undefined)));
  }
  return chunks;
}

/**
 * Questions drawn from the corpus: each sampled chunk gives its last heading and a six-word window of its
 * body, plus questions that share no term with any chunk or only a few common ones.
 */
function questionsFrom(chunks: IndexedChunk[], count: number): string[] {
  const questions = new Set<string>(['how do I configure single sign-on', 'what is the GPU node pool for vLLM', 'zzzz unmatched term qqqq']);
  const step = Math.max(1, Math.floor(chunks.length / count));
  for (let i = 0; questions.size < count && i < chunks.length; i += step) {
    const chunk = chunks[i]!;
    const heading = chunk.headingPath.split(' > ').at(-1);
    if (heading) questions.add(heading);
    const words = chunk.text.split(/\n\n/).slice(1).join(' ').split(/\s+/).filter(Boolean);
    const start = (i * 7) % Math.max(1, words.length - 6);
    if (words.length > 0) questions.add(words.slice(start, start + 6).join(' '));
  }
  return [...questions].slice(0, count);
}

/** Qdrant scores in f32: equal up to its rounding (and ours in f64 for the BM25 sums). */
function sameScore(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * The same scores position by position, and the same ids within each run of equal scores (Qdrant leaves
 * ties in no particular order); a run cut by the limit is compared by its scores only. Returns what differs.
 */
function rankingDifference(embedded: SearchHit[], qdrant: SearchHit[], limit: number): string | undefined {
  const show = (hits: SearchHit[]) => hits.map((hit) => `  ${hit.source}#${hit.chunkIndex} ${hit.score.toFixed(7)}`).join('\n');
  const describe = (what: string) => `${what}\nembedded:\n${show(embedded)}\nqdrant:\n${show(qdrant)}`;
  if (embedded.length !== qdrant.length) return describe(`${embedded.length} hits against ${qdrant.length}`);
  const position = embedded.findIndex((hit, i) => !sameScore(hit.score, qdrant[i]!.score));
  if (position >= 0) return describe(`scores differ at position ${position}`);
  for (let start = 0; start < embedded.length; ) {
    let end = start + 1;
    while (end < embedded.length && sameScore(embedded[end]!.score, embedded[start]!.score)) end++;
    const cut = end === embedded.length && embedded.length === limit;
    const ids = (hits: SearchHit[]) => hits.slice(start, end).map((hit) => hit.id).sort().join(',');
    if (!cut && ids(embedded) !== ids(qdrant)) return describe(`passages differ at ${start}..${end - 1}`);
    start = end;
  }
  return undefined;
}

describe.skipIf(skipReason !== undefined)('LanceDbStore against Qdrant\'s engine (Qdrant Edge), through QdrantStore', () => {
  const collection = 'rag-edge-parity';
  let edge: QdrantEdgeServer;
  let dataDir = '';
  let embedded: LanceDbStore;
  let qdrant: QdrantStore;
  /** QdrantStore against services/retrieval/test/fakes/fake-qdrant.ts. */
  let fake: QdrantStore;
  let embedder: Model2VecEmbedder;
  let chunks: IndexedChunk[] = [];
  let questions: string[] = [];

  beforeAll(async () => {
    edge = await startQdrantEdge(python!);
    dataDir = await mkdtemp(join(tmpdir(), 'rag-edge-parity-'));
    embedder = new Model2VecEmbedder({ model: MODEL });
    const lock = await embedder.describe();
    embedded = new LanceDbStore({ dataDir, collection });
    qdrant = new QdrantStore({ url: edge.url, collection, minBackoffMs: 10, retries: 0 });
    fake = new QdrantStore({ url: (await startFakeServer(new FakeQdrant().handle)).url, collection, retries: 0 });
    chunks = await corpusChunks(embedder);
    questions = questionsFrom(chunks, 120);
    for (const store of [embedded, qdrant, fake] as VectorStore[]) {
      await store.open(lock);
      for (let i = 0; i < chunks.length; i += 256) await store.upsert(chunks.slice(i, i + 256));
    }
  });

  afterAll(async () => {
    await embedded?.close();
    await edge?.close();
    await closeFakeServers();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** Leg ties move RRF positions: a hybrid or dense case whose legs tie inside their windows is counted apart. */
  async function legsTie(query: HybridQuery): Promise<boolean> {
    const window = query.prefetchLimit + 1;
    const filter = { should: [{ is_empty: { key: 'groups' } }, ...(query.visibleGroups.length > 0 ? [{ key: 'groups', match: { any: [...query.visibleGroups] } }] : [])] };
    const legs = [
      ...(query.dense ? [{ query: query.dense, using: 'dense' }] : []),
      ...(query.sparse.indices.length > 0 ? [{ query: query.sparse, using: 'bm25' }] : []),
    ];
    for (const leg of legs) {
      const { points } = (await edge.oracle.call('query', { ...leg, filter, limit: window })) as { points: Array<{ score: number }> };
      if (points.some((point, i) => i > 0 && sameScore(point.score, points[i - 1]!.score))) return true;
    }
    return false;
  }

  async function queryOf(mode: Mode, position: number, visibleGroups: readonly string[], shape: (typeof SHAPES)[number]): Promise<HybridQuery> {
    const question = questions[position]!;
    const sparse = mode === 'dense' ? STOPWORDS_ONLY : encodeQuery(question);
    const dense = mode === 'sparse' ? undefined : await embedder.embedQuery(question);
    const fusion = mode === 'weighted' ? WEIGHTED[position % WEIGHTED.length] : undefined;
    return { ...shape, sparse, dense, visibleGroups, fusion };
  }

  /** Runs every question × caller × shape of a mode in both stores; returns the counts and every divergence. */
  async function compareMode(mode: Mode) {
    const divergences: string[] = [];
    const fakeDivergences: string[] = [];
    let compared = 0;
    let tied = 0;
    for (const [position, question] of questions.entries()) {
      for (const visibleGroups of CALLERS) {
        for (const shape of mode === 'sparse' ? SHAPES.slice(0, 1) : SHAPES) {
          const query = await queryOf(mode, position, visibleGroups, shape);
          if (mode !== 'sparse' && (await legsTie(query))) {
            tied++;
            continue;
          }
          const [ours, theirs, fakes] = await Promise.all([embedded.search(query), qdrant.search(query), fake.search(query)]);
          const fusion = query.fusion ? ` rrf k ${query.fusion.k} weights ${JSON.stringify(query.fusion.weights)}` : '';
          const label = `${mode} "${question}" as [${visibleGroups.join(', ')}] prefetch ${query.prefetchLimit}${fusion}`;
          const difference = rankingDifference(ours, theirs, query.limit);
          if (difference) divergences.push(`${label}: ${difference}`);
          const fakeDifference = rankingDifference(fakes, theirs, query.limit);
          if (fakeDifference) fakeDivergences.push(`fake Qdrant, ${label}: ${fakeDifference}`);
          compared++;
        }
      }
    }
    return { compared, tied, divergences, fakeDivergences };
  }

  /** Reads by id (MCP get_passage): every third chunk id and a few unknown ones, for each caller. */
  async function compareReads(phase: string): Promise<void> {
    const ids = [...chunks.filter((_, i) => i % 3 === 0).map((chunk) => chunk.id), '00000000-0000-4000-8000-000000000000'];
    const shown = (read: Chunk[]) => read.map(({ id, source, chunkIndex, text }) => `${id} ${source}#${chunkIndex} ${text.length}`).sort();
    for (const visibleGroups of CALLERS) {
      const [ours, theirs, fakes] = await Promise.all([embedded.getChunks(ids, visibleGroups), qdrant.getChunks(ids, visibleGroups), fake.getChunks(ids, visibleGroups)]);
      expect(shown(ours), `${phase}: read by id as [${visibleGroups.join(', ')}]`).toEqual(shown(theirs));
      expect(shown(fakes), `${phase}: fake Qdrant's read by id as [${visibleGroups.join(', ')}]`).toEqual(shown(theirs));
      expect(theirs.length).toBeGreaterThan(0);
    }
    console.info(`qdrant-edge-parity: ${phase}: read by id: ${ids.length} ids × ${CALLERS.length} callers, same chunks`);
  }

  async function compareAll(phase: string): Promise<void> {
    await compareReads(phase);
    for (const mode of ['sparse', 'dense', 'hybrid', 'weighted'] as const) {
      const { compared, tied, divergences, fakeDivergences } = await compareMode(mode);
      console.info(`qdrant-edge-parity: ${phase}: ${mode}: ${compared} queries compared, ${tied} left out for tied legs, ${divergences.length} divergences (fake Qdrant: ${fakeDivergences.length})`);
      expect(divergences.slice(0, 3).join('\n\n')).toBe('');
      expect(fakeDivergences.slice(0, 3).join('\n\n')).toBe('');
      expect(compared).toBeGreaterThanOrEqual(mode === 'sparse' ? 300 : 400);
    }
  }

  it('holds the same few hundred chunks in each', async () => {
    expect(chunks.length).toBeGreaterThan(300);
    expect(await qdrant.count()).toBe(chunks.length);
    expect(await embedded.count()).toBe(chunks.length);
    expect(await fake.count()).toBe(chunks.length);
  });

  it('ranks and scores alike in every mode, for callers with and without groups', async () => {
    await compareAll('loaded');
  });

  /**
   * Qdrant's mutable segment keeps deleted points in its sparse IDF statistics (N and each document
   * frequency) until the segment is rebuilt: by the optimizer's vacuum (past 20 % deleted and 1,000
   * vectors, https://qdrant.tech/documentation/concepts/optimizer/#vacuum-optimizer) or a restart. Measured
   * here with Qdrant Edge 0.9.0: overwritten points are counted right away, deleted ones only after the
   * reload. The embedded store counts the live points, which is what Qdrant gives once rebuilt; the
   * comparison runs then, and the interval's divergences are printed.
   */
  it('still ranks and scores alike after a sync deleted, rewrote and regrouped documents', async () => {
    const sources = [...new Set(chunks.map((chunk) => chunk.source))];
    const edited = chunks.filter((chunk) => chunk.source === sources[3]).map((chunk) => ({ ...chunk, text: `${chunk.text}\n\nRevised: single sign-on now needs TLS.` }));
    const rewritten = await vectorizeChunks(edited, { contentHash: 'hash-edited', groups: edited[0]!.groups }, embedder, 64, () => undefined);
    for (const store of [embedded, qdrant, fake] as VectorStore[]) {
      for (const source of sources.filter((_, i) => i % 5 === 1)) await store.deleteBySource(source);
      await store.upsert(rewritten);
      await store.setGroups(sources[0]!, ['support']);
      await store.setGroups(sources[2]!, []);
    }
    expect(await qdrant.count()).toBe(await embedded.count());
    expect(await fake.count()).toBe(await embedded.count());
    const beforeRebuild = await compareMode('sparse');
    console.info(`qdrant-edge-parity: after a sync, before Qdrant rebuilds its segment: sparse: ${beforeRebuild.divergences.length} of ${beforeRebuild.compared} queries score otherwise (deleted points still in Qdrant's IDF)`);
    await edge.oracle.call('reload', {});
    await compareAll('after a sync');
  });
});
