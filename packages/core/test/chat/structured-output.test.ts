/**
 * The structured-output canary (structured-output.ts) through the real gateway adapter against local servers that
 * answer as OpenAI's chat completions API documents (https://platform.openai.com/docs/guides/structured-outputs):
 * one decodes under the schema it is given, one ignores `response_format` and answers free text with 200 (what
 * llama-server does with the flat form, ggml-org/llama.cpp PR #28697), one refuses it with 400.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiGatewayChatModel } from '../../src/chat/openai-gateway.ts';
import { StructuredOutput } from '../../src/chat/structured-output.ts';
import { closedPortUrl, closeFakeServers, sendJson, startFakeServer, type RecordedRequest } from '../adapters/fake-server.ts';

afterEach(closeFakeServers);

interface Body {
  response_format?: { type: string; json_schema?: { schema: { properties: { answer: { enum: string[] } } } } };
}

function completion(response: ServerResponse, content: string): void {
  sendJson(response, 200, { id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });
}

/** Decodes under the schema: the one value its enum allows. */
const honouring = (request: RecordedRequest, response: ServerResponse) => {
  const format = (request.body as Body).response_format;
  completion(response, format?.type === 'json_schema' ? JSON.stringify({ answer: format.json_schema!.schema.properties.answer.enum[0] }) : 'Sure!');
};
const ignoring = (_request: RecordedRequest, response: ServerResponse) => completion(response, '{"answer": "here is some JSON"}');
const refusing = (_request: RecordedRequest, response: ServerResponse) => sendJson(response, 400, { error: { message: "response_format type must be one of 'text' or 'json_object'", type: 'invalid_request_error' } });

function structuredOutput(url: string, setting: 'auto' | 'json_schema' | 'off' = 'auto'): StructuredOutput {
  return new StructuredOutput(setting, new OpenAiGatewayChatModel({ url, model: 'm', retries: 0 }));
}

describe('GATEWAY_STRUCTURED=auto', () => {
  it('asks once, in the json_schema form with a name and strict, and answers structured when the gateway honours it', async () => {
    const gateway = await startFakeServer(honouring);
    const output = structuredOutput(gateway.url);
    expect(output.current).toBe('undecided');
    expect(await output.enabled()).toBe(true);
    expect(await output.enabled()).toBe(true);
    expect(output.current).toBe('json_schema');
    expect(gateway.requests).toHaveLength(1);
    expect((gateway.requests[0]!.body as Record<string, unknown>).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'canary', strict: true, schema: { type: 'object', properties: { answer: { type: 'string', enum: ['rag-canary-7d1e'] } }, required: ['answer'], additionalProperties: false } },
    });
  });

  it('detects a gateway that ignores the schema (JSON of its own, HTTP 200) and one that refuses it, and answers free text', async () => {
    for (const handler of [ignoring, refusing]) {
      const gateway = await startFakeServer(handler);
      const output = structuredOutput(gateway.url);
      expect(await output.enabled()).toBe(false);
      expect(output.current).toBe('off');
    }
  });

  it('stays undecided while the gateway cannot be reached, answering free text, and asks again', async () => {
    const output = structuredOutput(await closedPortUrl());
    expect(await output.enabled()).toBe(false);
    expect(output.current).toBe('undecided');
  });

  it('asks nothing when the setting says json_schema or off', async () => {
    const gateway = await startFakeServer(ignoring);
    expect(await structuredOutput(gateway.url, 'json_schema').enabled()).toBe(true);
    expect(await structuredOutput(gateway.url, 'off').enabled()).toBe(false);
    expect(gateway.requests).toHaveLength(0);
  });
});
