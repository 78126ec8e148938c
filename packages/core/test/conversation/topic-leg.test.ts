import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { chunkId } from '../../src/chunking/chunk-id.ts';
import { NOT_COVERED_ANSWER } from '../../src/chat/extractive.ts';
import type { ChatModel } from '../../src/chat/chat-model.ts';
import type { ConversationTurn } from '../../src/conversation/conversation.ts';
import { fuseTopicLeg, previousSearchText, topicSources, type TopicLeg } from '../../src/conversation/topic-leg.ts';
import type { FollowUpSearch } from '../../src/conversation/fused-follow-up.ts';
import type { SearchHit } from '../../src/domain.ts';
import { Answerer } from '../../src/pipeline/answer.ts';
import { Retriever } from '../../src/pipeline/retrieve.ts';
import { PUBLIC_ONLY } from '../../src/access/groups.ts';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import { LanceDbStore } from '../../src/stores/lancedb.ts';
import { Telemetry } from '../../src/telemetry.ts';

const user = (content: string): ConversationTurn => ({ role: 'user', content });
const assistant = (content: string): ConversationTurn => ({ role: 'assistant', content });
const hit = (source: string, chunkIndex: number): SearchHit => ({ id: `${source}#${chunkIndex}`, source, headingPath: '', chunkIndex, text: '', score: 9, fusionScore: 9 });
const labels = (hits: readonly SearchHit[]) => hits.map((each) => `${each.source}#${each.chunkIndex}`);

describe('the topic leg of an LLM-free follow-up', () => {
  it('is searched within the first two distinct documents of the previous search, read from its first five passages', () => {
    const previous = [hit('a.md', 0), hit('a.md', 1), hit('b.md', 0), hit('c.md', 0), hit('a.md', 2), hit('d.md', 0)];
    expect(topicSources(previous)).toEqual(['a.md', 'b.md']);
    expect(topicSources([hit('a.md', 0), hit('a.md', 1), hit('a.md', 2), hit('a.md', 3), hit('a.md', 4), hit('b.md', 0)])).toEqual(['a.md']);
    expect(topicSources([])).toEqual([]);
  });

  it('takes the previous question as that turn searched it: expanded with the turns before it', () => {
    const earlier = [user('What is an ApplicationSet?'), assistant('An ApplicationSet …'), user('Which generators can it use?'), assistant('List, Git …')];
    expect(previousSearchText(earlier)).toBe('Which generators can it use?\nWhat is an ApplicationSet?');
    expect(previousSearchText([user('What are sync waves?')])).toBe('What are sync waves?');
    expect(previousSearchText([assistant('hello')])).toBeUndefined();
  });

  it("fuses by Qdrant's weighted RRF, the leg at half weight: its first passage counts as the expanded query's second", () => {
    const expanded = [hit('cli.md', 0), hit('waves.md', 0), hit('waves.md', 1)];
    const topic = [hit('waves.md', 1), hit('waves.md', 0)];
    const fused = fuseTopicLeg(expanded, topic, 2);
    // waves#1: 1/(3+1) + 1/(1/0.5+1) = 0.583; waves#0: 1/3 + 1/(2/0.5+1) = 0.533; cli#0: 1/2.
    expect(labels(fused)).toEqual(['waves.md#1', 'waves.md#0', 'cli.md#0']);
    expect(fused[0]!.score).toBeCloseTo(1 / 4 + 1 / 3, 6);
    expect(fused[0]!.fusionScore).toBe(fused[0]!.score);
    // Alone, the leg's best passage scores what the expanded query's second does: the expanded query's first stays first.
    expect(labels(fuseTopicLeg([hit('cli.md', 0), hit('x.md', 0)], [hit('waves.md', 1)], 2))[0]).toBe('cli.md#0');
  });
});

describe('an LLM-free follow-up searched by the Answerer (real LanceDB, BM25)', () => {
  let dataDir: string;
  let store: LanceDbStore;
  const telemetry = new Telemetry();
  const documents: Record<string, string[]> = {
    'sync-waves.md': ['Sync waves group the resources of an app into ordered steps of a sync.', 'The lowest number goes first, then each higher one in turn.'],
    'cli.md': ['argocd app sync: sync an app, sync waves and sync hooks included; every sync of the app waits for its waves.', 'argocd app wait: wait for the app to sync.'],
    'badge.md': ['A status badge shows the health of an app in a README.'],
    // "first" and "go" are common words elsewhere, as in any manual: the expanded query's topic words outweigh them.
    'getting-started.md': ['First, install the CLI and go to the UI.', 'The first login goes through the admin account first.', 'First steps: go create a first project.'],
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'rag-topic-leg-'));
    store = new LanceDbStore({ dataDir, collection: 'docs' });
    await store.open(null);
    await store.upsert(
      Object.entries(documents).flatMap(([source, texts]) =>
        texts.map((text, chunkIndex) => ({ id: chunkId(source, chunkIndex), source, headingPath: source, chunkIndex, text, contentHash: 'h', groups: [], sparse: encodeDocument(text), ingestedAt: 'now' })),
      ),
    );
  });

  afterAll(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Read by the finance group only; a public caller's history names it to try to reach it through the leg. */
  async function addRestrictedPlan(): Promise<void> {
    const text = 'Sync waves of the payroll app: the ledger wave goes first, then the payslips.';
    await store.upsert([{ id: chunkId('finance/payroll-sync.md', 0), source: 'finance/payroll-sync.md', headingPath: 'finance/payroll-sync.md', chunkIndex: 0, text, contentHash: 'h', groups: ['finance'], sparse: encodeDocument(text), ingestedAt: 'now' }]);
  }

  const answerer = (minScore?: number) => new Answerer({ retriever: new Retriever({ store, rerankCandidates: 50, telemetry }), minScore, telemetry });
  const earlier = [user('What are sync waves?'), assistant('Sync waves group the resources of an app [sync-waves.md#0].')];

  it("finds the passage the follow-up's own words name in the previous question's documents, which the expanded query alone ranks below", async () => {
    const expandedOnly = await new Retriever({ store, rerankCandidates: 50, telemetry }).search('Which ones go first?\nWhat are sync waves?', 1, PUBLIC_ONLY);
    expect(labels(expandedOnly)).not.toContain('sync-waves.md#1');
    const { search, retrieval, topic } = await answerer().retrieveFor('Which ones go first?', 1, PUBLIC_ONLY, undefined, earlier);
    expect(search).toEqual({ text: 'Which ones go first?\nWhat are sync waves?', method: 'expanded' });
    expect(topic).toEqual({ text: 'Which ones go first?', sources: expect.arrayContaining(['sync-waves.md']) });
    expect(labels(retrieval.hits)).toEqual(['sync-waves.md#1']);
  });

  it('leaves a change of topic to the expanded query: the follow-up that names its own subject finds it', async () => {
    const { retrieval, topic } = await answerer().retrieveFor('How do I show a status badge in a README?', 1, PUBLIC_ONLY, undefined, earlier);
    expect(topic?.sources).not.toContain('badge.md');
    expect(labels(retrieval.hits)).toEqual(['badge.md#0']);
  });

  it("searches the leg within its documents only: the store honours the filter's exact sources", async () => {
    const hits = await store.search({ sparse: encodeQuery('first'), limit: 10, prefetchLimit: 20, visibleGroups: PUBLIC_ONLY, filter: { sourcesIn: ['sync-waves.md', 'cli.md'] } });
    expect(labels(hits)).toEqual(['sync-waves.md#1']);
  });

  it('keeps the request filter on both legs and on the previous search', async () => {
    const { retrieval, topic } = await answerer().retrieveFor('Which ones go first?', 2, PUBLIC_ONLY, undefined, earlier, { filter: { source: 'cli.md' } });
    expect(topic?.sources).toEqual(['cli.md']);
    expect(retrieval.hits.every((each) => each.source === 'cli.md')).toBe(true);
  });

  it('is judged relevant by the coverage rule, not RAG_MIN_SCORE: its score is a rank score, not the BM25 score the threshold was set for', async () => {
    const threshold = 1.5;
    expect((await answerer(threshold).answer('Which ones go first?', 1, PUBLIC_ONLY, undefined, earlier)).citations[0]?.source).toBe('sync-waves.md');
    // The same threshold still declines a first question whose BM25 score is below it.
    const weak = await answerer(50).answer('Which ones go first?', 1, PUBLIC_ONLY);
    expect(weak.answer).toBe(NOT_COVERED_ANSWER);
  });

  it('is not searched for a first question, nor for a condensed one searched alone (FOLLOW_UP_SEARCH=condensed)', async () => {
    const first = await answerer().retrieveFor('Which ones go first?', 1, PUBLIC_ONLY);
    expect(first.topic).toBeUndefined();
    expect(first.search.method).toBe('question');

    const { condensed, searched } = await condensedFollowUp('condensed');
    expect(condensed.search).toMatchObject({ text: 'which sync waves go first', method: 'condensed' });
    expect(condensed.topic).toBeUndefined();
    expect(searched).toEqual([undefined]);
  });

  it('is searched beside a condensed follow-up fused with its expansion (FOLLOW_UP_SEARCH=fused, the default)', async () => {
    const { condensed, searched } = await condensedFollowUp(undefined);
    expect(condensed.search.text).toBe('which sync waves go first');
    expect(condensed.topic).toBeDefined();
    // The previous question (which finds the topic's documents), the condensed query alone, the expansion with its topic leg.
    expect(searched).toEqual([undefined, undefined, condensed.topic]);
    expect(condensed.rankScored).toBe(true);
  });

  /** A follow-up the gateway condenses, retrieved with every Retriever.retrieve call's topic leg recorded. */
  async function condensedFollowUp(followUpSearch: FollowUpSearch | undefined) {
    const condenser: ChatModel = {
      modelId: 'condenser',
      complete: async () => ({ content: 'Query: which sync waves go first' }),
      stream: () => {
        throw new Error('not used');
      },
    };
    const searched: (TopicLeg | undefined)[] = [];
    const retriever = new Retriever({ store, rerankCandidates: 50, telemetry });
    const retrieve = retriever.retrieve.bind(retriever);
    retriever.retrieve = (...args) => {
      searched.push(args[5]);
      return retrieve(...args);
    };
    const condensed = await new Answerer({ retriever, chatModel: condenser, telemetry, followUpSearch }).retrieveFor('Which ones go first?', 1, PUBLIC_ONLY, undefined, earlier);
    return { condensed, searched };
  }

  it("reaches no document the caller may not read, whatever the history names: the previous search and both legs run under the caller's groups", async () => {
    await addRestrictedPlan();
    onTestFinished(() => store.deleteBySource('finance/payroll-sync.md'));
    const history = [user('What are the sync waves of the payroll app?'), assistant('The ledger wave goes first [finance/payroll-sync.md#0].')];
    const publicCaller = await answerer().retrieveFor('Which ones go first?', 5, PUBLIC_ONLY, undefined, history);
    expect(publicCaller.topic?.sources ?? []).not.toContain('finance/payroll-sync.md');
    expect(publicCaller.retrieval.hits.map((each) => each.source)).not.toContain('finance/payroll-sync.md');
    // The leg itself too, handed the restricted document by name.
    const retriever = new Retriever({ store, rerankCandidates: 50, telemetry });
    const leg = await retriever.retrieve('Which ones go first?', 5, PUBLIC_ONLY, undefined, {}, { text: 'Which ones go first?', sources: ['finance/payroll-sync.md'] });
    expect(leg.hits.map((each) => each.source)).not.toContain('finance/payroll-sync.md');
    const financeCaller = await answerer().retrieveFor('Which ones go first?', 5, ['finance'], undefined, history);
    expect(financeCaller.topic?.sources).toContain('finance/payroll-sync.md');
    expect(financeCaller.retrieval.hits[0]?.source).toBe('finance/payroll-sync.md');
  });

  it("searches the leg within the previous question's documents, never the whole collection", async () => {
    // The follow-up's own words ("first", "go") are common in getting-started.md, which the previous question
    // never reached: searched over the whole collection, the leg would rank one of them into the first three.
    const { retrieval, topic } = await answerer().retrieveFor('Which ones go first?', 3, PUBLIC_ONLY, undefined, earlier);
    expect(topic?.sources).not.toContain('getting-started.md');
    expect(retrieval.hits.map((each) => each.source)).not.toContain('getting-started.md');

    // The leg alone (an expanded query that matches nothing): only its sources' passages come back.
    const retriever = new Retriever({ store, rerankCandidates: 50, telemetry });
    const alone = await retriever.retrieve('zzzqqq', 5, PUBLIC_ONLY, undefined, {}, { text: 'Which ones go first?', sources: ['sync-waves.md'] });
    expect(labels(alone.hits)).toEqual(['sync-waves.md#1']);
  });
});
