/**
 * The grounding check on every interface that returns a generated answer: /chat JSON and its stream's done
 * event, /v1/chat/completions (rag.grounding, and the last streamed chunk), MCP `ask` over HTTP. The model
 * answers one sentence from the handbook's passage and one fact that no passage holds.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ChatMessage, ChatModel, ChatStreamEvent } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startTestStack, type TestStack } from './test-stack.ts';

const QUESTION = 'How many days a week can I work from home?';
const INVENTED = 'Requests are filed in the Workday portal and approved by the regional director every quarter.';

class PartlyGroundedModel implements ChatModel {
  readonly modelId = 'partly-grounded';

  private tokens(messages: ChatMessage[]): string[] {
    const label = /^<<<PASSAGE [0-9a-f]{24} \[(P\d+)\]>>>$/m.exec(messages.map((m) => m.content).join('\n'))?.[1] ?? 'none';
    return ['Everyone may work ', 'from home up to three days a week ', `[${label}]. `, INVENTED];
  }

  async complete(messages: ChatMessage[]) {
    return { content: this.tokens(messages).join('') };
  }

  async *stream(messages: ChatMessage[]): AsyncIterable<ChatStreamEvent> {
    for (const text of this.tokens(messages)) yield { type: 'token', text };
    yield { type: 'done' };
  }
}

let llm: TestStack;
let extractive: TestStack;

beforeAll(async () => {
  [llm, extractive] = await Promise.all([startTestStack({ chatModel: new PartlyGroundedModel() }), startTestStack({})]);
});

afterAll(async () => {
  await Promise.all([llm?.close(), extractive?.close()]);
});

function expectPartlyGrounded(grounding: any): void {
  expect(grounding).toMatchObject({ grounded: false, unsupported: 1, miscited: 0, attributed: 0 });
  expect(grounding.sentences.map((sentence: { status: string }) => sentence.status)).toEqual(['supported', 'unsupported']);
  expect(grounding.sentences[0].supported_by).toMatch(/^onboarding\.md#\d+$/);
  expect(grounding.sentences[1].text).toBe(INVENTED);
}

function sseData(text: string, event: string): any[] {
  return [...text.matchAll(new RegExp(`event: ${event}\\ndata: (.+)\\n`, 'g'))].map((match) => JSON.parse(match[1]!));
}

describe('grounding of generated answers', () => {
  it('/chat flags the sentence no passage supports, in the JSON answer and in the stream\'s done event', async () => {
    const { body } = await postJson(llm.baseUrl, '/chat', { query: QUESTION });
    expectPartlyGrounded(body.grounding);
    const streamed = await fetch(`${llm.baseUrl}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: QUESTION, stream: true }) });
    const [done] = sseData(await streamed.text(), 'done');
    expect(done.grounding).toEqual(body.grounding);
  });

  it('/v1/chat/completions carries it in rag.grounding and on the last streamed chunk only', async () => {
    const { body } = await postJson(llm.baseUrl, '/v1/chat/completions', { model: 'rag', messages: [{ role: 'user', content: QUESTION }] });
    expectPartlyGrounded(body.rag.grounding);
    const streamed = await fetch(`${llm.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'rag', messages: [{ role: 'user', content: QUESTION }], stream: true }) });
    const chunks = [...(await streamed.text()).matchAll(/^data: (\{.+\})$/gm)].map((match) => JSON.parse(match[1]!));
    expectPartlyGrounded(chunks.at(-1).grounding);
    expect(chunks.slice(0, -1).every((chunk) => chunk.grounding === undefined)).toBe(true);
  });

  it('MCP ask returns it structured and says so in its text', async () => {
    const client = new Client({ name: 'rag-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${llm.baseUrl}/mcp`)));
    try {
      const result: any = await client.callTool({ name: 'ask', arguments: { question: QUESTION } });
      expectPartlyGrounded(result.structuredContent.grounding);
      expect(result.content[0].text).toContain('Not grounded: 1 sentence(s) are supported by no passage given.');
    } finally {
      await client.close();
    }
  });

  it('an extractive answer quotes passages and carries no grounding check', async () => {
    const { body } = await postJson(extractive.baseUrl, '/chat', { query: QUESTION });
    expect(body.mode).toBe('extractive');
    expect(body).not.toHaveProperty('grounding');
  });
});
