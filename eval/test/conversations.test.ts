import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLogger, loadConfig } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConversationSet } from '../src/conversation-set.ts';
import { conversationMarkdown } from '../src/conversation-report.ts';
import { runConversationSet, type ConversationResult } from '../src/conversation-runner.ts';
import { EmbeddedIndex } from '../src/embedded-index.ts';
import { GoldenSetError } from '../src/golden-set.ts';

const repository = resolve(import.meta.dirname, '../..');

/** Over the handbook fixtures of the retrieval service: follow-ups that name nothing of their passage. */
const SET = `
corpus: services/retrieval/test/fixtures/handbook
gate: {min_hit5: 1, min_mrr: 0.4, why: the LLM-free mode must find both}
conversations:
  - history: [{question: How often are database snapshots taken?, answer: Every night.}]
    follow_up: And how do I bring one back?
    standalone: restore a database snapshot with stratactl restore
    expected_source: backups.md
    expected_substring: stratactl restore
  - history: [{question: How many days a week may I work from home?}]
    follow_up: And after probation?
    standalone: full remote contracts after the probation period
    expected_source: onboarding.md
    expected_substring: Full remote contracts
`;

let result: ConversationResult;
let dataDir: string;

beforeAll(async () => {
  const set = parseConversationSet(SET, 'mini-conversations.yaml', repository);
  dataDir = await mkdtemp(join(tmpdir(), 'rag-eval-conversations-'));
  const index = await EmbeddedIndex.open(loadConfig({ RAG_DATA_DIR: dataDir }), createLogger('silent'));
  try {
    await index.ingestFolder(set.corpus);
    result = await runConversationSet(set, index);
  } finally {
    await index.close();
  }
});

afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the multi-turn eval', () => {
  it('misses a follow-up searched on its own words and finds it with its history, LLM-free and condensed', () => {
    expect(result.conversations[0]!.modes['without history'].rank).toBeUndefined();
    expect(result.metrics['LLM-free (expanded)']!.hitAt5).toBe(1);
    expect(result.conversations[0]!.modes['LLM-free (expanded)'].query).toBe('And how do I bring one back?\nHow often are database snapshots taken?');
    // The product's LLM-free search (Answerer.retrieveFor): the topic leg searches the previous question's documents.
    expect(result.conversations[0]!.modes['LLM-free (expanded)'].topicSources?.[0]).toBe('backups.md');
    expect(result.conversations[0]!.modes['scripted gateway (condensed)']).toEqual({ query: 'restore a database snapshot with stratactl restore', rank: 1 });
    expect(result.metrics['scripted gateway (condensed)']!.mrr).toBe(1);
  });

  it('gates on the LLM-free mode and reports every mode', () => {
    expect(result.gate).toMatchObject({ mode: 'LLM-free (expanded)', passed: true, failures: [] });
    const markdown = conversationMarkdown(result, undefined);
    // "And after probation?" finds its passage on its own word; the other one needs its history.
    expect(markdown).toMatch(/\| without history \| [\d.]+ \| 0\.500 \|/);
    expect(markdown).toMatch(/\| LLM-free \(expanded\) \| [\d.]+ \| 1\.000 \|/);
    expect(markdown).toContain('**passed**');
    expect(markdown).toMatch(/How often are database snapshots taken\? ⟂ topic leg in backups\.md/);
  });

  it('refuses a set whose conversation has no history', () => {
    expect(() => parseConversationSet(SET.replace(/history: \[\{question: How many[^\n]*\n/, 'history: []\n'), 'bad.yaml', repository)).toThrow(GoldenSetError);
  });
});
