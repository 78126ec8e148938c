/**
 * Answers as structured output (GATEWAY_STRUCTURED, core chat/structured-*.ts) through the real gateway adapter and
 * every interface, against local gateways answering as OpenAI's chat completions API documents: one decodes under
 * the JSON schema it is given (https://platform.openai.com/docs/guides/structured-outputs), one ignores
 * `response_format` and answers free text with 200 (llama-server given the flat form: ggml-org/llama.cpp PR #28697).
 */
import type { ServerResponse } from 'node:http';
import { OpenAiGatewayChatModel, StructuredOutput, UNSUPPORTED_MARK } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakeServers, sendJson, startFakeServer, type FakeServer, type RecordedRequest } from '../../../packages/core/test/adapters/fake-server.ts';
import { answersInEveryInterface } from './every-interface.ts';
import { startTestStack, type TestStack } from './test-stack.ts';

const QUESTION = 'How many days a week can I work from home?';
const SUPPORTED = 'Everyone may work from home up to three days a week.';
const ADDED = 'The office gym opens at six on weekdays.';

interface Body {
  stream?: boolean;
  response_format?: { type: string; json_schema: { name: string; schema: { properties: Record<string, any> } } };
}

/** What a schema-constrained model writes: JSON the schema allows (the canary's one value; two sentences citing P1). */
function schemaReply(format: NonNullable<Body['response_format']>): string {
  if (format.json_schema.name === 'canary') return JSON.stringify({ answer: format.json_schema.schema.properties.answer.enum[0] });
  const labels: string[] = format.json_schema.schema.properties.sentences.items.properties.passages.items.enum;
  return JSON.stringify({ sentences: [{ text: SUPPORTED, passages: [] }, { text: ADDED, passages: [labels[0]] }] });
}

function gateway(honoursSchemas: boolean) {
  return (request: RecordedRequest, response: ServerResponse) => {
    const body = request.body as Body;
    const content = honoursSchemas && body.response_format?.type === 'json_schema' ? schemaReply(body.response_format) : `${SUPPORTED} ${ADDED.slice(0, -1)} [P1].`;
    if (!body.stream) {
      return sendJson(response, 200, { id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (choices: unknown[]) => response.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices })}\n\n`);
    for (const piece of content.match(/[\s\S]{1,7}/g)!) chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]);
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    response.end('data: [DONE]\n\n');
  };
}

const MARK = UNSUPPORTED_MARK.replace(/[[\]]/g, '\\$&');
const SHOWN = new RegExp(`^Everyone may work from home up to three days a week \\[onboarding\\.md#\\d+\\]\\. The office gym opens at six on weekdays ${MARK}\\.$`);

describe.each([
  ['honours JSON schemas', true, 'json_schema'],
  ['ignores them, answering free text with 200', false, 'off'],
])('a gateway that %s', (_name, honoursSchemas, expectedState) => {
  let fake: FakeServer;
  let stack: TestStack;

  beforeAll(async () => {
    fake = await startFakeServer(gateway(honoursSchemas));
    const chatModel = new OpenAiGatewayChatModel({ url: fake.url, model: 'm', retries: 0 });
    const structuredOutput = new StructuredOutput('auto', chatModel);
    stack = await startTestStack({ chatModel, structuredOutput });
  });

  afterAll(async () => {
    await stack?.close();
    await closeFakeServers();
  });

  it(`is detected by the canary (${expectedState}), reported by /readyz`, async () => {
    await answersInEveryInterface(stack, QUESTION);
    const readyz = (await (await fetch(`${stack.baseUrl}/readyz`)).json()) as { details?: unknown };
    expect(readyz.details).toEqual({ gateway: { structured_output: expectedState } });
    const asks = fake.requests.filter((request) => request.path === '/v1/chat/completions').map((request) => (request.body as Body).response_format?.json_schema.name ?? 'free text');
    expect(asks[0]).toBe('canary');
    expect(new Set(asks.slice(1))).toEqual(new Set([honoursSchemas ? 'cited_answer' : 'free text']));
  });

  it('shows the same checked answer in every interface: the uncited sentence cited, the added one marked', async () => {
    const shown = await answersInEveryInterface(stack, QUESTION);
    for (const [name, answer] of Object.entries(shown)) expect(answer, name).toMatch(SHOWN);
  });
});
