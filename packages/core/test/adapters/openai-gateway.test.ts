/**
 * OpenAiGatewayChatModel against a server that answers as the OpenAI chat completions API does:
 * https://platform.openai.com/docs/api-reference/chat/create (chat.completion) and
 * https://platform.openai.com/docs/api-reference/chat-streaming (chat.completion.chunk over SSE).
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiGatewayChatModel } from '../../src/chat/openai-gateway.ts';
import type { ChatMessage, ChatStreamEvent } from '../../src/chat/chat-model.ts';
import { closedPortUrl, closeFakeServers, hang, sendJson, startFakeServer, within } from './fake-server.ts';
import { failure } from './rag-failure.ts';

afterEach(closeFakeServers);

const KEY = 'gw-key-abcdefgh';
const messages: ChatMessage[] = [
  { role: 'system', content: 'Answer from the passages.' },
  { role: 'user', content: 'What is RRF?' },
];

const completion = {
  id: 'chatcmpl-123',
  object: 'chat.completion',
  created: 1_741_569_952,
  model: 'qwen3-4b-cpu',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Reciprocal Rank Fusion [a.md#0].' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 },
};

function chunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return { id: 'chatcmpl-123', object: 'chat.completion.chunk', created: 1_741_569_952, model: 'qwen3-4b-cpu', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
}

/** The events OpenAI sends with stream_options.include_usage: role, content, finish, a usage chunk with no choices, [DONE]. */
const streamEvents = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Reciprocal ' }),
  chunk({ content: 'Rank Fusion.' }),
  chunk({}, 'stop'),
  { id: 'chatcmpl-123', object: 'chat.completion.chunk', created: 1_741_569_952, model: 'qwen3-4b-cpu', choices: [], usage: { prompt_tokens: 120, completion_tokens: 5, total_tokens: 125 } },
];

function startSse(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

function sse(response: ServerResponse, data: unknown): void {
  response.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}


describe('OpenAiGatewayChatModel.complete', () => {
  it('posts {model, messages, stream: false} with the bearer key and maps content and usage', async () => {
    const server = await startFakeServer((_, res) => sendJson(res, 200, completion));
    const model = new OpenAiGatewayChatModel({ url: server.url, apiKey: KEY });
    const answer = await model.complete(messages);
    expect(answer).toEqual({ content: 'Reciprocal Rank Fusion [a.md#0].', usage: { promptTokens: 120, completionTokens: 9, totalTokens: 129 } });
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.body).toEqual({ model: 'qwen3-4b-cpu', messages, stream: false });
  });

  it('sends the configured model and temperature', async () => {
    const server = await startFakeServer((_, res) => sendJson(res, 200, completion));
    await new OpenAiGatewayChatModel({ url: server.url, model: 'qwen3-8b-gpu', temperature: 0.1 }).complete(messages);
    expect(server.requests[0]?.body).toEqual({ model: 'qwen3-8b-gpu', messages, stream: false, temperature: 0.1 });
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('reports an OpenAI error body without retrying a 400, and without the key', async () => {
    const server = await startFakeServer((_, res) =>
      sendJson(res, 400, { error: { message: 'The model `nope` does not exist', type: 'invalid_request_error', param: null, code: 'model_not_found' } }),
    );
    const error = await within(failure(new OpenAiGatewayChatModel({ url: server.url, apiKey: KEY, model: 'nope' }).complete(messages)));
    expect(error.code).toBe('RAG_GATEWAY_UNAVAILABLE');
    expect(error.message).toContain('HTTP 400: The model `nope` does not exist');
    expect(error.message).not.toContain(KEY);
    expect(server.requests).toHaveLength(1);
  });

  it("retries Envoy's 503 and reports the gateway unavailable", async () => {
    const server = await startFakeServer((_, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('no healthy upstream');
    });
    const error = await within(failure(new OpenAiGatewayChatModel({ url: server.url, minBackoffMs: 5 }).complete(messages)));
    expect(error.code).toBe('RAG_GATEWAY_UNAVAILABLE');
    expect(error.message).toContain('HTTP 503: no healthy upstream');
    expect(server.requests).toHaveLength(3);
  });

  it('reports a hang as RAG_GATEWAY_TIMEOUT', async () => {
    const server = await startFakeServer(hang);
    const error = await within(failure(new OpenAiGatewayChatModel({ url: server.url, timeoutMs: 200 }).complete(messages)));
    expect(error.code).toBe('RAG_GATEWAY_TIMEOUT');
  });
});

describe('OpenAiGatewayChatModel.stream', () => {
  it('asks for a stream with usage, yields each token then done with the usage', async () => {
    const server = await startFakeServer((_, res) => {
      startSse(res);
      for (const event of streamEvents) sse(res, event);
      sse(res, '[DONE]');
      res.end();
    });
    const events = await collect(new OpenAiGatewayChatModel({ url: server.url, apiKey: KEY }).stream(messages));
    expect(events).toEqual([
      { type: 'token', text: 'Reciprocal ' },
      { type: 'token', text: 'Rank Fusion.' },
      { type: 'done', usage: { promptTokens: 120, completionTokens: 5, totalTokens: 125 } },
    ]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.requests[0]?.body).toEqual({ model: 'qwen3-4b-cpu', messages, stream: true, stream_options: { include_usage: true } });
  });

  it('parses events split across writes, CRLF line ends and keep-alive comments', async () => {
    const server = await startFakeServer(async (_, res) => {
      startSse(res);
      const text = `: keep-alive\r\n\r\n${streamEvents.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join('')}data: [DONE]\r\n\r\n`;
      for (let i = 0; i < text.length; i += 7) {
        res.write(text.slice(i, i + 7));
        await new Promise((resolve) => setImmediate(resolve));
      }
      res.end();
    });
    const events = await collect(new OpenAiGatewayChatModel({ url: server.url }).stream(messages));
    expect(events.filter((e) => e.type === 'token').map((e) => (e as { text: string }).text).join('')).toBe('Reciprocal Rank Fusion.');
    expect(events.at(-1)).toEqual({ type: 'done', usage: { promptTokens: 120, completionTokens: 5, totalTokens: 125 } });
  });

  it('aborts the upstream request when the caller aborts mid-stream', async () => {
    const server = await startFakeServer((_, res) => {
      startSse(res);
      sse(res, streamEvents[1]); // one token, then the model "thinks" forever
    });
    const controller = new AbortController();
    const model = new OpenAiGatewayChatModel({ url: server.url });
    const seen: ChatStreamEvent[] = [];
    const consuming = (async () => {
      for await (const event of model.stream(messages, controller.signal)) {
        seen.push(event);
        controller.abort(); // the client closed the request after the first token
      }
    })();
    const error = await within(failure(consuming));
    expect(error.code).toBe('RAG_CLIENT_CLOSED');
    expect(seen).toEqual([{ type: 'token', text: 'Reciprocal ' }]);
    await within(server.requests[0]!.clientGone);
  });

  it('closes the upstream request when the consumer stops reading early', async () => {
    const server = await startFakeServer((_, res) => {
      startSse(res);
      sse(res, streamEvents[1]);
    });
    for await (const event of new OpenAiGatewayChatModel({ url: server.url }).stream(messages)) {
      expect(event.type).toBe('token');
      break;
    }
    await within(server.requests[0]!.clientGone);
  });

  it('reports an error event mid-stream as unavailable', async () => {
    const server = await startFakeServer((_, res) => {
      startSse(res);
      sse(res, streamEvents[1]);
      sse(res, { error: { message: 'CUDA out of memory', type: 'InternalServerError', code: 500 } });
      res.end();
    });
    const error = await within(failure(collect(new OpenAiGatewayChatModel({ url: server.url }).stream(messages))));
    expect(error.code).toBe('RAG_GATEWAY_UNAVAILABLE');
    expect(error.message).toContain('CUDA out of memory');
  });

  it('reports a stream cut before the completion finished as unavailable', async () => {
    const server = await startFakeServer((_, res) => {
      startSse(res);
      sse(res, streamEvents[1]);
      res.end();
    });
    const error = await within(failure(collect(new OpenAiGatewayChatModel({ url: server.url }).stream(messages))));
    expect(error.code).toBe('RAG_GATEWAY_UNAVAILABLE');
  });

  it('reports a stream that stalls past the deadline as RAG_GATEWAY_TIMEOUT', async () => {
    const server = await startFakeServer((_, res) => {
      startSse(res);
      sse(res, streamEvents[1]);
    });
    const error = await within(failure(collect(new OpenAiGatewayChatModel({ url: server.url, timeoutMs: 300 }).stream(messages))));
    expect(error.code).toBe('RAG_GATEWAY_TIMEOUT');
  });

  // The exact plain-text answers of Envoy 1.40 in front of a model server (measured in envoy-gateway.real.test.ts).
  for (const [status, body, code] of [
    [503, 'upstream connect error or disconnect/reset before headers. reset reason: remote connection failure', 'RAG_GATEWAY_UNAVAILABLE'],
    [503, 'no healthy upstream', 'RAG_GATEWAY_UNAVAILABLE'],
    [504, 'upstream request timeout', 'RAG_GATEWAY_TIMEOUT'],
  ] as const) {
    it(`names Envoy's ${status} "${body.slice(0, 24)}…" before a stream starts as ${code}, never a JSON error`, async () => {
      const server = await startFakeServer((_, res) => {
        res.writeHead(status, { 'content-type': 'text/plain', server: 'envoy' });
        res.end(body);
      });
      const error = await within(failure(collect(new OpenAiGatewayChatModel({ url: server.url, retries: 0 }).stream(messages))));
      expect(error.code).toBe(code);
      expect(error.status).toBe(status);
      expect(error.message).toContain(`HTTP ${status}: ${body}`);
    });
  }

  it('retries a 429 before the stream starts', async () => {
    let calls = 0;
    const server = await startFakeServer((_, res) => {
      if (calls++ === 0) return sendJson(res, 429, { error: { message: 'Rate limit', type: 'rate_limit_error' } }, { 'retry-after': '0' });
      startSse(res);
      for (const event of streamEvents) sse(res, event);
      sse(res, '[DONE]');
      res.end();
    });
    const events = await collect(new OpenAiGatewayChatModel({ url: server.url, minBackoffMs: 5 }).stream(messages));
    expect(events.at(-1)?.type).toBe('done');
    expect(server.requests).toHaveLength(2);
  });
});

describe('OpenAiGatewayChatModel.checkReady', () => {
  it('lists the models with the bearer key', async () => {
    const server = await startFakeServer((_, res) =>
      sendJson(res, 200, { object: 'list', data: [{ id: 'qwen3-4b-cpu', object: 'model', created: 1, owned_by: 'vllm' }] }),
    );
    await new OpenAiGatewayChatModel({ url: server.url, apiKey: KEY }).checkReady();
    expect(server.requests[0]?.method).toBe('GET');
    expect(server.requests[0]?.path).toBe('/v1/models');
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('reports a gateway that is down or failing as unavailable', async () => {
    const refused = new OpenAiGatewayChatModel({ url: await closedPortUrl() });
    expect((await within(failure(refused.checkReady()))).code).toBe('RAG_GATEWAY_UNAVAILABLE');
    const server = await startFakeServer((_, res) => sendJson(res, 503, { error: { message: 'down' } }));
    expect((await within(failure(new OpenAiGatewayChatModel({ url: server.url }).checkReady()))).code).toBe('RAG_GATEWAY_UNAVAILABLE');
    expect(server.requests).toHaveLength(1); // a probe is not retried
  });
});
