/**
 * Every interface shows a generated answer as the grounding check verified it (core answer-check/verified-answer.ts):
 * the sentence the model left uncited is cited by the system, the one no passage supports is marked, or left out
 * with a notice under UNSUPPORTED_CLAIMS=drop, and an answer with no supported claim is the not-covered answer.
 * /chat (JSON and stream), /v1/chat/completions and MCP ask, over real HTTP against the handbook fixture.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { NOT_COVERED_ANSWER, UNSUPPORTED_MARK, type ChatCompletion, type ChatModel, type ChatStreamEvent, type UnsupportedClaims } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startTestStack, type TestStack } from './test-stack.ts';

const QUESTION = 'How many days a week can I work from home?';
/** Restates the handbook without a citation, then says what no passage says, citing the first passage. */
const MODEL_ANSWER = 'Everyone may work from home up to three days a week. The office gym opens at six on weekdays [P1].';
const CITED = /^Everyone may work from home up to three days a week \[onboarding\.md#\d+\]\./;

class ScriptedModel implements ChatModel {
  readonly modelId = 'scripted';
  constructor(private readonly text: string) {}
  async complete(): Promise<ChatCompletion> {
    return { content: this.text };
  }
  async *stream(): AsyncIterable<ChatStreamEvent> {
    for (const piece of this.text.match(/[\s\S]{1,4}/g)!) yield { type: 'token', text: piece };
    yield { type: 'done' };
  }
}

/** The answer each interface shows for QUESTION. */
async function answers(stack: TestStack): Promise<Record<string, string>> {
  const json = await postJson(stack.baseUrl, '/chat', { query: QUESTION });
  const streamed = await fetch(`${stack.baseUrl}/chat`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ query: QUESTION }) });
  const events = [...(await streamed.text()).matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((match) => ({ event: match[1]!, data: JSON.parse(match[2]!) }));
  const tokens = events.filter(({ event }) => event === 'token').map(({ data }) => data.text as string).join('');
  const done = events.at(-1)!;
  expect(done.event).toBe('done');
  expect(tokens, 'the stream sends what its done event holds').toBe(done.data.answer);
  const v1 = await postJson(stack.baseUrl, '/v1/chat/completions', { model: 'rag', messages: [{ role: 'user', content: QUESTION }] });
  const client = new Client({ name: 'rag-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`)));
  try {
    const ask = (await client.callTool({ name: 'ask', arguments: { question: QUESTION } })) as { structuredContent?: { answer: string } };
    return { chat: json.body.answer, stream: done.data.answer, v1: v1.body.choices[0].message.content, mcp: ask.structuredContent!.answer };
  } finally {
    await client.close();
  }
}

describe.each<[UnsupportedClaims, RegExp]>([
  ['mark', new RegExp(`${CITED.source} The office gym opens at six on weekdays ${UNSUPPORTED_MARK.replace(/[[\]]/g, '\\$&')}\\.$`)],
  ['drop', new RegExp(`${CITED.source}\\n\\n\\(1 sentence was left out: no passage supports it\\.\\)$`)],
])('UNSUPPORTED_CLAIMS=%s', (unsupportedClaims, expected) => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ chatModel: new ScriptedModel(MODEL_ANSWER), unsupportedClaims });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('cites the uncited sentence and marks or drops the unsupported one, the same in every interface', async () => {
    const shown = await answers(stack);
    for (const [name, answer] of Object.entries(shown)) expect(answer, name).toMatch(expected);
  });

  it('lists as citations only the passages that support a sentence shown, and reports the check', async () => {
    const { body } = await postJson(stack.baseUrl, '/chat', { query: QUESTION });
    expect(body.citations.map((citation: { source: string }) => citation.source)).toEqual(['onboarding.md']);
    expect(body.grounding).toMatchObject({ grounded: false, unsupported: 1, attributed: 1 });
  });
});

describe('an answer none of whose claims a passage supports', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ chatModel: new ScriptedModel('The office gym opens at six on weekdays [P1]. Parking is free on Fridays.') });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('says the documents do not cover the question, in every interface, citing nothing', async () => {
    const shown = await answers(stack);
    for (const [name, answer] of Object.entries(shown)) expect(answer, name).toBe(NOT_COVERED_ANSWER);
    const { body } = await postJson(stack.baseUrl, '/chat', { query: QUESTION });
    expect(body.citations).toEqual([]);
    expect(body.grounding).toMatchObject({ grounded: false, unsupported: 2 });
  });
});
