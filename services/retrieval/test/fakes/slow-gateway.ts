/**
 * An OpenAI-compatible gateway that streams its answer slowly, as a CPU-tier model does, so that a test
 * can act while a /chat stream is in flight: one `chat.completion.chunk` per token every `tokenDelayMs`,
 * then the usage chunk and `data: [DONE]` (https://platform.openai.com/docs/api-reference/chat-streaming).
 * With `neverFinish`, it sends the first sentence and the start of the second (the service sends a sentence
 * once the next one begins) and then waits until the client goes away.
 */
import type { ServerResponse } from 'node:http';
import { sendJson, type RecordedRequest } from '../../../../packages/core/test/adapters/fake-server.ts';

/** A sentence the handbook supports, uncited (the service cites it), then one that makes no claim. */
export const SLOW_ANSWER_TOKENS = ['Up ', 'to ', 'three ', 'days ', 'a ', 'week ', 'from ', 'home', '. ', 'Thanks', '.'];
const SECOND_SENTENCE_STARTS = SLOW_ANSWER_TOKENS.indexOf('Thanks');

export class SlowGateway {
  constructor(private readonly options: { tokenDelayMs: number; neverFinish?: boolean }) {}

  handle = async (request: RecordedRequest, response: ServerResponse): Promise<void> => {
    if (request.method === 'GET' && request.path === '/v1/models') {
      return sendJson(response, 200, { object: 'list', data: [{ id: 'qwen3-4b-cpu', object: 'model', created: 0, owned_by: 'vllm' }] });
    }
    const body = request.body as { model: string; stream?: boolean };
    if (request.method !== 'POST' || request.path !== '/v1/chat/completions' || !body.stream) {
      return sendJson(response, 404, { error: { message: 'this fake only streams', type: 'invalid_request_error', code: 404 } });
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (choices: unknown[], usage: unknown = null) =>
      response.write(`data: ${JSON.stringify({ id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 0, model: body.model, choices, usage })}\n\n`);
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    for (const [position, text] of SLOW_ANSWER_TOKENS.entries()) {
      if (this.options.neverFinish && position > SECOND_SENTENCE_STARTS) return request.clientGone;
      if (response.destroyed) return;
      chunk([{ index: 0, delta: { content: text }, finish_reason: null }]);
      await new Promise((resolve) => setTimeout(resolve, this.options.tokenDelayMs));
    }
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    chunk([], { prompt_tokens: 100, completion_tokens: SLOW_ANSWER_TOKENS.length, total_tokens: 100 + SLOW_ANSWER_TOKENS.length });
    response.end('data: [DONE]\n\n');
  };
}
