import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLogger, loadConfig } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../services/retrieval/test/test-stack.ts';
import { EmbeddedIndex } from '../src/embedded-index.ts';
import { loadGoldenSet, type GoldenSet } from '../src/golden-set.ts';
import { HttpBackend } from '../src/http-backend.ts';
import { runGoldenSet, type GoldenResult } from '../src/runner.ts';

const repository = resolve(import.meta.dirname, '../..');
const fixtureCorpus = resolve(import.meta.dirname, 'fixtures/corpus');
const gate = { minHit5: 0.9, minMrr: 0.75 };

let set: GoldenSet;
let inProcess: GoldenResult;
let stack: TestStack;
let overHttp: GoldenResult;
let dataDir: string;

beforeAll(async () => {
  set = await loadGoldenSet(resolve(import.meta.dirname, 'fixtures/mini.yaml'), repository);
  dataDir = await mkdtemp(join(tmpdir(), 'rag-eval-test-'));
  const index = await EmbeddedIndex.open(loadConfig({ RAG_DATA_DIR: dataDir, CHUNK_MIN_CHARS: '0' }), createLogger('silent'));
  try {
    expect(await index.ingestFolder(set.corpus!)).toEqual({ files: 3, chunks: 6 });
    inProcess = await runGoldenSet(set, index, gate);
  } finally {
    await index.close();
  }
  stack = await startTestStack({ folder: fixtureCorpus });
  overHttp = await runGoldenSet(set, new HttpBackend(stack.baseUrl), gate);
});

afterAll(async () => {
  await stack?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('the runner in process, over a fixture corpus ingested into a temporary index', () => {
  it('finds every in-scope answer first and passes the gate', () => {
    expect(inProcess.questions.map((outcome) => outcome.rank)).toEqual([1, 1, 1, 1, undefined]);
    expect(inProcess.inScope).toEqual({ questions: 4, hitAt1: 1, hitAt5: 1, mrr: 1 });
    expect(inProcess.gate).toMatchObject({ passed: true, failures: [] });
    expect(inProcess.backend).toContain('sparse BM25 only');
  });

  it('reports the out-of-scope question with no passage at all, and separates the two classes', () => {
    expect(inProcess.outOfScopeTopScores).toEqual([{ number: 5, question: 'What is the recipe for a chocolate cake?', topScore: undefined, topCoverage: 0 }]);
    expect(inProcess.auroc).toBe(1);
    expect(inProcess.thresholds.coverageRule.outOfScopeAccepted).toBe(0);
  });

  it('breaks the metrics down by kind', () => {
    expect(Object.keys(inProcess.byKind).sort()).toEqual(['identifier', 'unlabelled']);
    expect(inProcess.byKind['identifier']?.questions).toBe(1);
  });

  it('lists the top 3 sources of every question', () => {
    expect(inProcess.questions[0]?.top[0]).toMatchObject({ source: 'backups.md', headingPath: 'Backups > Schedule' });
  });
});

describe('the runner over HTTP against the real retrieval app', () => {
  it('gives the same ranks and top scores as the in-process run', () => {
    expect(overHttp.backend).toBe(`HTTP ${stack.baseUrl}`);
    expect(overHttp.questions.map((outcome) => [outcome.rank, outcome.topScore])).toEqual(inProcess.questions.map((outcome) => [outcome.rank, outcome.topScore]));
    expect(overHttp.inScope).toEqual(inProcess.inScope);
  });

  it('fails the gate when the expected source is never returned', async () => {
    const failing = await loadGoldenSet(resolve(import.meta.dirname, 'fixtures/failing.yaml'), repository);
    const result = await runGoldenSet(failing, new HttpBackend(stack.baseUrl), gate);
    expect(result.gate.passed).toBe(false);
    expect(result.gate.failures).toEqual(['hit@5 0.000 < 0.9', 'MRR 0.000 < 0.75']);
  });
});
