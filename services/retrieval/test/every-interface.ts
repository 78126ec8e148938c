import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'vitest';
import { postJson, type TestStack } from './test-stack.ts';

/**
 * The answer each interface shows for `question`: /chat's JSON, its stream (whose tokens must add up to its done
 * event's answer), /v1/chat/completions and MCP `ask` over HTTP.
 */
export async function answersInEveryInterface(stack: TestStack, question: string): Promise<Record<'chat' | 'stream' | 'v1' | 'mcp', string>> {
  const json = await postJson(stack.baseUrl, '/chat', { query: question });
  const streamed = await fetch(`${stack.baseUrl}/chat`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ query: question }) });
  const events = [...(await streamed.text()).matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((match) => ({ event: match[1]!, data: JSON.parse(match[2]!) }));
  const tokens = events.filter(({ event }) => event === 'token').map(({ data }) => data.text as string).join('');
  const done = events.at(-1)!;
  expect(done.event).toBe('done');
  expect(tokens, 'the stream sends what its done event holds').toBe(done.data.answer);
  const v1 = await postJson(stack.baseUrl, '/v1/chat/completions', { model: 'rag', messages: [{ role: 'user', content: question }] });
  const client = new Client({ name: 'rag-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`)));
  try {
    const ask = (await client.callTool({ name: 'ask', arguments: { question } })) as { structuredContent?: { answer: string } };
    return { chat: json.body.answer, stream: done.data.answer, v1: v1.body.choices[0].message.content, mcp: ask.structuredContent!.answer };
  } finally {
    await client.close();
  }
}
