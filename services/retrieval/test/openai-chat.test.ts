/**
 * POST /v1/chat/completions and GET /v1/models through the `openai` npm client, as Open WebUI or any
 * OpenAI SDK calls them: the real app on port 0, extractive and with a chat model, plain and streamed.
 */
import type { ChatMessage, ChatModel, ChatStreamEvent } from '@rag/core';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { postJson, readJson, startTestStack, type TestStack } from './test-stack.ts';

const KEY = 'sk-openai-client-31f0a2';
const QUESTION = 'How many days a week can I work from home?';

const INVENTED_LABEL = 'made-up.md#9';

/**
 * Answers with the first passage's label from the prompt (its opening fence's `[P1]`, cut between two
 * tokens), then a label of no passage given.
 */
class CitingChatModel implements ChatModel {
  readonly modelId = 'citing-model';
  prompts: ChatMessage[][] = [];

  private tokens(messages: ChatMessage[]): string[] {
    this.prompts.push(messages);
    const label = /^<<<PASSAGE [0-9a-f]{24} \[(P\d+)\]>>>$/m.exec(messages.filter((m) => m.role !== 'system').map((m) => m.content).join('\n'))?.[1] ?? 'none#0';
    return ['Up to three days ', 'a week [', `${label}].`, ` See [${INVENTED_LABEL}].`];
  }

  async complete(messages: ChatMessage[]) {
    return { content: this.tokens(messages).join(''), usage: { promptTokens: 100, completionTokens: 9, totalTokens: 109 } };
  }

  async *stream(messages: ChatMessage[]): AsyncIterable<ChatStreamEvent> {
    for (const text of this.tokens(messages)) yield { type: 'token', text };
    yield { type: 'done', usage: { promptTokens: 100, completionTokens: 9, totalTokens: 109 } };
  }
}

let extractive: TestStack;
let llm: TestStack;
const chatModel = new CitingChatModel();

beforeAll(async () => {
  [extractive, llm] = await Promise.all([
    startTestStack({ apiKeys: parseApiKeys(`keys:\n  - {name: webui, sha256: ${hashApiKey(KEY)}, groups: []}\n`, 'keys.yaml') }),
    startTestStack({ chatModel }),
  ]);
});

afterAll(async () => {
  await Promise.all([extractive?.close(), llm?.close()]);
});

function client(stack: TestStack, apiKey = KEY): OpenAI {
  return new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey, maxRetries: 0 });
}

describe('OpenAI-compatible chat', () => {
  it('lists the one model, rag', async () => {
    const models = await client(extractive).models.list();
    expect(models.data.map((model) => model.id)).toEqual(['rag']);
  });

  it('answers extractively with [source#chunk] labels in the text and structured citations', async () => {
    const completion = await client(extractive).chat.completions.create({ model: 'rag', messages: [{ role: 'user', content: QUESTION }] });
    const content = completion.choices[0]!.message.content!;
    expect(content).toContain('three days');
    expect(content).toMatch(/\[onboarding\.md#\d+\]/);
    const citations = (completion as unknown as { citations: Array<{ source: string; label: string }> }).citations;
    expect(citations[0]).toMatchObject({ source: 'onboarding.md', label: expect.stringMatching(/^\[onboarding\.md#\d+\]$/) });
    expect(content).toContain(citations[0]!.label);
    expect((completion as unknown as { rag: { mode: string } }).rag.mode).toBe('extractive');
  });

  it('takes the last user message as the question, whatever came before', async () => {
    const completion = await client(extractive).chat.completions.create({
      model: 'rag',
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'What is the recipe for a chocolate cake?' },
        { role: 'assistant', content: 'The documents do not cover that.' },
        { role: 'user', content: [{ type: 'text', text: QUESTION }] },
      ],
    });
    expect(completion.choices[0]!.message.content).toContain('three days');
  });

  it('streams chat.completion.chunk events ending with [DONE]', async () => {
    const stream = await client(extractive).chat.completions.create({ model: 'rag', messages: [{ role: 'user', content: QUESTION }], stream: true });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === 'rag')).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.map((chunk) => chunk.choices[0]!.delta.content ?? '').join('')).toContain('three days');
    // The client stops at `data: [DONE]`: check the raw stream ends with it.
    const raw = await fetch(`${extractive.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: 'rag', messages: [{ role: 'user', content: QUESTION }], stream: true }),
    });
    expect(raw.headers.get('content-type')).toContain('text/event-stream');
    expect((await raw.text()).trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('answers through the chat model in llm mode, plain and streamed, with usage', async () => {
    const completion = await client(llm).chat.completions.create({ model: 'rag', messages: [{ role: 'user', content: QUESTION }] });
    // The model cited the prompt's [P1]; the client reads the passage's own label.
    expect(completion.choices[0]!.message.content).toMatch(/^Up to three days a week \[onboarding\.md#\d+\]\. See \[made-up\.md#9\]\.$/);
    expect(completion.usage).toEqual({ prompt_tokens: 100, completion_tokens: 9, total_tokens: 109 });
    expect((completion as unknown as { rag: { mode: string } }).rag.mode).toBe('llm');
    // The question reaches the model inside our cited prompt, not the client's messages.
    expect(chatModel.prompts.at(-1)!.map((m) => m.content).join('\n')).toContain(QUESTION);

    const stream = await client(llm).chat.completions.create({ model: 'rag', messages: [{ role: 'user', content: QUESTION }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(completion.choices[0]!.message.content);
  });

  it('reports the labels that match no passage given, as /chat does, plain and on the last streamed chunk', async () => {
    type WithCitations = { citations: Array<{ label: string }>; unknown_citations?: string[] };
    const completion = (await client(llm).chat.completions.create({ model: 'rag', messages: [{ role: 'user', content: QUESTION }] })) as unknown as WithCitations;
    expect(completion.unknown_citations).toEqual([INVENTED_LABEL]);
    expect(completion.citations.map((citation) => citation.label)).toEqual([expect.stringMatching(/^\[onboarding\.md#\d+\]$/)]);
    const { body: chat } = await postJson(llm.baseUrl, '/chat', { query: QUESTION });
    expect(chat.unknown_citations).toEqual(completion.unknown_citations);

    const stream = await client(llm).chat.completions.create({ model: 'rag', messages: [{ role: 'user', content: QUESTION }], stream: true });
    const chunks: WithCitations[] = [];
    for await (const chunk of stream) chunks.push(chunk as unknown as WithCitations);
    expect(chunks.at(-1)!.unknown_citations).toEqual([INVENTED_LABEL]);
    expect(chunks.slice(0, -1).every((chunk) => chunk.unknown_citations === undefined)).toBe(true);

    const extractiveCompletion = await client(extractive).chat.completions.create({ model: 'rag', messages: [{ role: 'user', content: QUESTION }] });
    expect(extractiveCompletion).not.toHaveProperty('unknown_citations');
  });

  it('refuses in OpenAI\'s error shape with our code', async () => {
    const missingKey = client(extractive, 'sk-wrong');
    await expect(missingKey.models.list()).rejects.toMatchObject({ status: 401, code: 'RAG_UNAUTHENTICATED', type: 'authentication_error' });
    await expect(client(extractive).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: QUESTION }] })).rejects.toMatchObject({
      status: 404,
      code: 'RAG_UNKNOWN_MODEL',
    });
    await expect(client(extractive).chat.completions.create({ model: 'rag', messages: [{ role: 'system', content: 'hi' }] })).rejects.toMatchObject({
      status: 400,
      code: 'RAG_NO_QUESTION',
      type: 'invalid_request_error',
    });
    const invalid = await fetch(`${extractive.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: '{"model": "rag", "messages": "hi"}',
    });
    expect(invalid.status).toBe(400);
    expect(await readJson(invalid)).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'RAG_INVALID_REQUEST' } });
  });
});
