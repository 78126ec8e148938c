import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import { NOT_COVERED_ANSWER } from '../../src/chat/extractive.ts';
import { Answerer } from '../../src/pipeline/answer.ts';
import { Retriever } from '../../src/pipeline/retrieve.ts';
import type { Reranker, RerankScore } from '../../src/rerankers/reranker.ts';
import { encodeDocument } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { Telemetry } from '../../src/telemetry.ts';
import { toFreshnessBoost } from '../../src/search-filter/freshness.ts';

/** A reranker port that gives every passage the same probability: the test decides what it says. */
class FixedReranker implements Reranker {
  readonly modelId = 'fixed';
  calls = 0;
  constructor(private readonly probability: number) {}
  async rerank(_query: string, texts: string[]): Promise<RerankScore[]> {
    this.calls += 1;
    return texts.map((_, index) => ({ index, score: this.probability }));
  }
}

let dataDir: string;
let store: LanceDbStore;
const telemetry = new Telemetry();

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rag-answer-'));
  store = new LanceDbStore({ dataDir, collection: 'docs' });
  await store.open(null);
  const texts = ['snapshots are kept for 35 days', 'snapshots restore into staging first', 'snapshots need two approvals'];
  await store.upsert(
    texts.map((text, index) => ({
      id: chunkId('backups.md', index),
      source: 'backups.md',
      headingPath: 'Backups',
      chunkIndex: index,
      text: `backups.md > Backups\n\n${text}`,
      contentHash: 'h',
      groups: [],
      sparse: encodeDocument(text),
      ingestedAt: 'now',
    })),
  );
});

afterEach(async () => {
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

function answererWith(reranker: Reranker, minScore: number): Answerer {
  const retriever = new Retriever({ store, reranker, rerankCandidates: 50, telemetry });
  return new Answerer({ retriever, minScore, telemetry });
}

describe('RAG_MIN_SCORE with a reranker', () => {
  it('declines when the reranker scored the best passage below the threshold', async () => {
    const reranker = new FixedReranker(0.05);
    const answer = await answererWith(reranker, 0.2).answer('how long are snapshots kept?', 2, []);
    expect(reranker.calls).toBe(1);
    expect(answer.answer).toBe(NOT_COVERED_ANSWER);
  });

  it('answers when the rerank probability clears the threshold', async () => {
    const answer = await answererWith(new FixedReranker(0.9), 0.2).answer('how long are snapshots kept?', 2, []);
    expect(answer.citations[0]?.source).toBe('backups.md');
  });

  it('falls back to the coverage rule when the reranker did not run (k or fewer candidates)', async () => {
    const reranker = new FixedReranker(0.05);
    const answer = await answererWith(reranker, 0.99).answer('how long are snapshots kept?', 5, []);
    expect(reranker.calls).toBe(0);
    expect(answer.citations[0]?.source).toBe('backups.md');
  });
});

describe('RAG_MIN_SCORE without a reranker, and a freshness boost', () => {
  const answerer = (minScore: number) => new Answerer({ retriever: new Retriever({ store, rerankCandidates: 50, telemetry }), minScore, telemetry });
  const boost = { freshness: toFreshnessBoost({ half_life_days: 30, weight: 0.1 }) };

  it('compares the fused score it was set for: the BM25 score here, so a threshold above it declines', async () => {
    expect((await answerer(50).answer('how long are snapshots kept?', 2, [])).answer).toBe(NOT_COVERED_ANSWER);
    expect((await answerer(0.9).answer('how long are snapshots kept?', 2, [])).citations[0]?.source).toBe('backups.md');
  });

  it('leaves a boosted score (rank score + bonus, at most 0.6 here) to the coverage rule', async () => {
    const answer = await answerer(0.9).answer('how long are snapshots kept?', 2, [], undefined, [], boost);
    expect(answer.citations[0]?.source).toBe('backups.md');
  });
});

describe('the coverage rule in a collection of another language', () => {
  it("stems the question with the collection's BM25 language: 'cheval' is covered by 'chevaux' in French", async () => {
    const frenchDir = await mkdtemp(join(tmpdir(), 'rag-answer-fr-'));
    const french = new LanceDbStore({ dataDir: frenchDir, collection: 'docs', bm25Language: 'french' });
    try {
      await french.open(null);
      const text = 'Les chevaux dorment à l’écurie.';
      await french.upsert([
        { id: chunkId('écurie.md', 0), source: 'écurie.md', headingPath: 'Écurie', chunkIndex: 0, text: `écurie.md > Écurie\n\n${text}`, contentHash: 'h', groups: [], sparse: encodeDocument(text, 'french'), ingestedAt: 'now' },
      ]);
      const answer = await new Answerer({ retriever: new Retriever({ store: french, rerankCandidates: 50, telemetry }), telemetry }).answer('cheval', 1, []);
      expect(answer.answer).not.toBe(NOT_COVERED_ANSWER);
      expect(answer.citations.map((citation) => citation.source)).toEqual(['écurie.md']);
    } finally {
      await french.close();
      await rm(frenchDir, { recursive: true, force: true });
    }
  });
});
