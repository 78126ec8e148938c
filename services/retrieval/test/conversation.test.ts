import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OpenAiGatewayChatModel } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakeServers, startFakeServer, type FakeServer } from '../../../packages/core/test/adapters/fake-server.ts';
import { CondensingGateway, isCondenseCall } from './fakes/condensing-gateway.ts';
import { postJson, startTestStack, type TestStack } from './test-stack.ts';

/**
 * Follow-ups over the handbook fixtures. "And how do I bring one back?" shares no content word with any
 * passage: alone it is not covered; after a question about snapshots it must find the backups page.
 */
const FOLLOW_UP = 'And how do I bring one back?';
const EARLIER = { question: 'How often are database snapshots taken?', answer: 'Every night at 02:00 UTC [backups.md#0].' };
const NOT_COVERED = 'The indexed documents do not cover this question.';

describe('/chat follow-ups without a gateway (LLM-free expansion)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => stack.close());

  it('a follow-up alone names nothing the documents hold', async () => {
    const { body } = await postJson(stack.baseUrl, '/chat', { query: FOLLOW_UP });
    expect(body.answer).toBe(NOT_COVERED);
    expect(body.search_query).toBeUndefined();
  });

  it('with history, searches with the earlier question too, answers from the backups page and says what it searched', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/chat', { query: FOLLOW_UP, history: [EARLIER] });
    expect(status).toBe(200);
    expect(body.search_query).toBe(`${FOLLOW_UP}\n${EARLIER.question}`);
    expect(body.citations[0]).toMatchObject({ source: 'backups.md' });
    expect(body.answer).not.toBe(NOT_COVERED);
  });

  it('takes the conversation as OpenAI messages, the last user message being the question', async () => {
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: EARLIER.question },
      { role: 'assistant', content: EARLIER.answer },
      { role: 'user', content: FOLLOW_UP },
    ];
    const { status, body } = await postJson(stack.baseUrl, '/chat', { messages });
    expect(status).toBe(200);
    expect(body.search_query).toBe(`${FOLLOW_UP}\n${EARLIER.question}`);
    expect(body.citations[0]).toMatchObject({ source: 'backups.md' });
  });

  it('streams the search query with the citations', async () => {
    const response = await fetch(`${stack.baseUrl}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: FOLLOW_UP, history: [EARLIER], stream: true }),
    });
    const text = await response.text();
    const first = JSON.parse(/^event: citations\ndata: (.*)$/m.exec(text)![1]!);
    expect(first.search_query).toBe(`${FOLLOW_UP}\n${EARLIER.question}`);
    expect(first.citations[0].source).toBe('backups.md');
  });

  it('refuses a conversation past its bounds, or of the wrong shape, with a stable code', async () => {
    const tooMany = await postJson(stack.baseUrl, '/chat', { query: FOLLOW_UP, history: Array.from({ length: 11 }, () => EARLIER) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe('RAG_CONVERSATION_TOO_LONG');
    const ten = await postJson(stack.baseUrl, '/chat', { query: FOLLOW_UP, history: Array.from({ length: 10 }, () => EARLIER) });
    expect(ten.status).toBe(200);
    const tooBig = await postJson(stack.baseUrl, '/chat', { query: FOLLOW_UP, history: [{ question: 'x', answer: 'y'.repeat(16_000) }] });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.code).toBe('RAG_CONVERSATION_TOO_LONG');
    for (const body of [
      { query: FOLLOW_UP, history: [{ question: 'only a question' }] },
      { query: FOLLOW_UP, history: 'earlier' },
      { query: FOLLOW_UP, messages: [{ role: 'tool', content: 'x' }] },
      { query: FOLLOW_UP, history: [EARLIER], messages: [] },
    ]) {
      const refused = await postJson(stack.baseUrl, '/chat', body);
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('RAG_INVALID_CONVERSATION');
    }
    const noQuestion = await postJson(stack.baseUrl, '/chat', { messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }] });
    expect(noQuestion.body.error.code).toBe('RAG_NO_QUESTION');
  });
});

describe('follow-ups with a gateway (condensed)', () => {
  let stack: TestStack;
  let gateway: FakeServer;
  const script = new CondensingGateway();
  beforeAll(async () => {
    gateway = await startFakeServer(script.handle);
    stack = await startTestStack({ chatModel: new OpenAiGatewayChatModel({ url: gateway.url, retries: 0 }) });
  });
  afterAll(async () => {
    await stack.close();
    await closeFakeServers();
  });

  it('searches with the condensed query, answers the question as asked with the earlier turns in the prompt, and counts it', async () => {
    gateway.requests.length = 0;
    const { status, body } = await postJson(stack.baseUrl, '/chat', { query: FOLLOW_UP, history: [EARLIER] });
    expect(status).toBe(200);
    expect(body.search_query).toBe(script.condensed);
    expect(body.citations[0]).toMatchObject({ source: 'backups.md' });
    const [condense, answer] = gateway.requests.map((request) => request.body as any);
    expect(isCondenseCall(condense)).toBe(true);
    expect(condense.max_tokens).toBeGreaterThan(0);
    expect(condense.messages[1].content).toContain(EARLIER.question);
    // The answer call: rules, the earlier turns, then the user's own question after the passages.
    expect(answer.messages.map((message: any) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(answer.messages[1].content).toBe(EARLIER.question);
    expect(answer.messages[3].content).toMatch(new RegExp(`Question: ${FOLLOW_UP.replace('?', '\\?')}$`));
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/rag_conversation_follow_ups_total\{rag_search_query_method="condensed"\} 1/);
    expect(metrics).toMatch(/rag_retrieval_stage_duration_count\{stage="condense"\} 1/);
  });

  it('a failed condensation never fails the request: the LLM-free query is searched and a warning counted', async () => {
    script.condenseStatus = 400;
    try {
      const { status, body } = await postJson(stack.baseUrl, '/chat', { query: FOLLOW_UP, history: [EARLIER] });
      expect(status).toBe(200);
      expect(body.search_query).toBe(`${FOLLOW_UP}\n${EARLIER.question}`);
      expect(body.citations[0]).toMatchObject({ source: 'backups.md' });
      const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/rag_conversation_follow_ups_total\{rag_search_query_method="condense_failed"\} 1/);
    } finally {
      script.condenseStatus = undefined;
    }
  });

  it('/v1/chat/completions uses the earlier messages it is given', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/v1/chat/completions', {
      model: 'rag',
      messages: [
        { role: 'user', content: EARLIER.question },
        { role: 'assistant', content: EARLIER.answer },
        { role: 'user', content: FOLLOW_UP },
      ],
    });
    expect(status).toBe(200);
    expect(body.rag.search_query).toBe(script.condensed);
    expect(body.citations[0]).toMatchObject({ source: 'backups.md' });
  });

  it('the MCP ask tool takes the history', async () => {
    const client = new Client({ name: 'rag-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`)));
    try {
      const result: any = await client.callTool({ name: 'ask', arguments: { question: FOLLOW_UP, history: [EARLIER] } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent.search_query).toBe(script.condensed);
      expect(result.structuredContent.citations[0].source).toBe('backups.md');
      const tooLong: any = await client.callTool({ name: 'ask', arguments: { question: FOLLOW_UP, history: Array.from({ length: 11 }, () => EARLIER) } });
      expect(tooLong.isError).toBe(true);
      expect(tooLong.content[0].text).toContain('RAG_CONVERSATION_TOO_LONG');
    } finally {
      await client.close();
    }
  });
});

/**
 * A small model's condensation can name the wrong topic (eval/reports/conversations-*-qwen2.5-coder-1.5b-instruct.md):
 * fused with the LLM-free search (FOLLOW_UP_SEARCH=fused, the default), the follow-up still finds its page.
 */
describe.each([
  ['fused', 'backups.md'],
  ['condensed', 'onboarding.md'],
] as const)('a wrong condensation, FOLLOW_UP_SEARCH=%s', (followUpSearch, firstSource) => {
  let stack: TestStack;
  let gateway: FakeServer;
  const script = new CondensingGateway();
  beforeAll(async () => {
    script.condensed = 'how many days a week can I work from home';
    gateway = await startFakeServer(script.handle);
    stack = await startTestStack({ chatModel: new OpenAiGatewayChatModel({ url: gateway.url, retries: 0 }), followUpSearch });
  });
  afterAll(async () => {
    await stack.close();
    await closeFakeServers();
  });

  it(`answers from ${firstSource} first`, async () => {
    const { status, body } = await postJson(stack.baseUrl, '/chat', { query: FOLLOW_UP, history: [EARLIER] });
    expect(status).toBe(200);
    expect(body.search_query).toBe(script.condensed);
    expect(body.citations[0]).toMatchObject({ source: firstSource });
    const sources = (await postJson(stack.baseUrl, '/chat', { query: FOLLOW_UP, history: [EARLIER] })).body.citations.map((citation: { source: string }) => citation.source);
    expect(sources.includes('backups.md')).toBe(followUpSearch === 'fused');
  });
});
