import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createChatModel, createLogger, loadConfig, NOT_COVERED_ANSWER } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateAnswers, isDeclined, type AnswerEvaluation } from '../src/answers.ts';
import { EmbeddedIndex } from '../src/embedded-index.ts';
import { loadGoldenSet } from '../src/golden-set.ts';
import { JUDGE_RUBRIC, parseVerdict } from '../src/judge-prompt.ts';

interface ChatRequest {
  messages: Array<{ role: string; content: string }>;
}

/**
 * Answers like an OpenAI-compatible gateway (POST /v1/chat/completions): as the judge when the
 * system prompt is the rubric, otherwise with the first sentence of the first passage, its label and one
 * invented label.
 */
function fakeGateway(requests: ChatRequest[]): Server {
  return createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
        response.writeHead(404).end();
        return;
      }
      const parsed = JSON.parse(body) as ChatRequest;
      requests.push(parsed);
      const system = parsed.messages[0]?.content ?? '';
      const user = parsed.messages.at(-1)?.content ?? '';
      const content =
        system === JUDGE_RUBRIC
          ? 'Here is my verdict:\n```json\n{"faithfulness": 0.5, "unsupported_claims": ["the invented part"], "reason": "half of it is in the passages"}\n```'
          : restatedFirstPassage(user);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
    });
  });
}

function restatedFirstPassage(prompt: string): string {
  const passage = /^<<<PASSAGE [0-9a-f]{24} \[(P\d+)\]>>>\n[^\n]*\n(?:[^\n]*\n)*?((?:\S+ ){4}[^\n]*)/m.exec(prompt);
  const sentence = (passage?.[2] ?? 'It is in the documents.').split(/(?<=[.!?])\s/)[0]!.replace(/[.!?]+$/, '');
  return `${sentence} [${passage?.[1] ?? 'none#0'}] and also [invented.md#7].`;
}

const repository = resolve(import.meta.dirname, '../..');
const requests: ChatRequest[] = [];
let gateway: Server;
let dataDir: string;
let evaluation: AnswerEvaluation;

beforeAll(async () => {
  gateway = fakeGateway(requests);
  await new Promise<void>((done) => gateway.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  dataDir = await mkdtemp(join(tmpdir(), 'rag-eval-answers-'));
  const config = loadConfig({ RAG_DATA_DIR: dataDir, GATEWAY_URL: url });
  const set = await loadGoldenSet(resolve(import.meta.dirname, 'fixtures/mini.yaml'), repository);
  const index = await EmbeddedIndex.open(config, createLogger('silent'));
  try {
    await index.ingestFolder(set.corpus!);
    evaluation = await evaluateAnswers(set, index, createChatModel(config)!, config.TOP_K, url);
  } finally {
    await index.close();
  }
});

afterAll(async () => {
  await new Promise((done) => gateway.close(done));
  await rm(dataDir, { recursive: true, force: true });
});

describe('answer-level evaluation against a local OpenAI-compatible gateway', () => {
  it('counts the citation the model invented, per answer', () => {
    expect(evaluation.inScope.map((outcome) => outcome.unknownCitations)).toEqual([['invented.md#7'], ['invented.md#7'], ['invented.md#7'], ['invented.md#7']]);
    expect(evaluation.unknownCitations).toBe(4);
    expect(evaluation.answersWithUnknownCitations).toBe(4);
    expect(evaluation.inScope.every((outcome) => outcome.citations === 1)).toBe(true);
  });

  it('sees the out-of-scope question declined without the model (the relevance rule)', () => {
    expect(evaluation.outOfScope).toHaveLength(1);
    expect(evaluation.outOfScope[0]).toMatchObject({ declined: true, citations: 0, faithfulness: undefined });
    expect(evaluation.outOfScopeDeclined).toBe(1);
    expect(evaluation.inScopeDeclined).toBe(0);
  });

  it('asks the same gateway to judge each answer with the fixed rubric, and reads the JSON verdict', () => {
    const judged = requests.filter((request) => request.messages[0]?.content === JUDGE_RUBRIC);
    expect(judged).toHaveLength(4);
    expect(judged[0]?.messages[1]?.content).toMatch(/Answer to grade:\n[^\n]+ \[backups\.md#\d+\] and also \[invented\.md#7\]\./);
    expect(evaluation.meanFaithfulness).toBe(0.5);
    expect(evaluation.judged).toBe(4);
    expect(evaluation.judgeFailures).toBe(0);
  });
});

describe('verdicts and declines', () => {
  it('reads a verdict wrapped in prose and refuses out-of-range or missing scores', () => {
    expect(parseVerdict('ok {"faithfulness": 1, "unsupported_claims": [], "reason": "all there"} done')).toEqual({ faithfulness: 1, unsupportedClaims: [], reason: 'all there' });
    expect(parseVerdict('{"faithfulness": 7}')).toBeUndefined();
    expect(parseVerdict('no json here')).toBeUndefined();
  });

  it('recognises the service refusal and a model declining, in English and French', () => {
    expect(isDeclined(NOT_COVERED_ANSWER)).toBe(true);
    expect(isDeclined('The documents do not cover this question.')).toBe(true);
    expect(isDeclined('Je ne sais pas. Les extraits ne parlent pas de chiens.')).toBe(true);
    expect(isDeclined('Les documents ne couvrent pas cette question.')).toBe(true);
    expect(isDeclined('Snapshots are kept for thirty days [backups.md#1].')).toBe(false);
  });
});
