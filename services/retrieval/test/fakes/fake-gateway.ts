/**
 * An OpenAI-compatible gateway (Envoy → vLLM) as the chat completions API documents it
 * (https://platform.openai.com/docs/api-reference/chat): `POST /v1/chat/completions` answers a
 * `chat.completion`, or with `stream: true` server-sent `chat.completion.chunk`s, a usage chunk
 * (`stream_options.include_usage`) and `data: [DONE]`; `GET /v1/models` lists the model; errors
 * `{error: {message, type, code}}`.
 *
 * The answer restates the first sentence of the prompt's first passage, cited by its label, as a model
 * does, then cites one invented label, so the tests can check that only given passages become citations.
 */
import type { ServerResponse } from 'node:http';
import { sendJson, type RecordedRequest } from '../../../../packages/core/test/adapters/fake-server.ts';

export const INVENTED_LABEL = 'made-up.md#99';
export const FAKE_USAGE = { prompt_tokens: 321, completion_tokens: 12, total_tokens: 333 };

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: string }>;
  stream?: boolean;
}

export class FakeGateway {
  /** When set, a stream sends its first tokens and then waits for the client to go away. */
  holdStreamOpen = false;

  handle = async (request: RecordedRequest, response: ServerResponse): Promise<void> => {
    if (request.method === 'GET' && request.path === '/v1/models') {
      return sendJson(response, 200, { object: 'list', data: [{ id: 'qwen3-4b-cpu', object: 'model', created: 0, owned_by: 'vllm' }] });
    }
    if (request.method !== 'POST' || request.path !== '/v1/chat/completions') return gatewayError(response, 404, 'not found');
    const body = request.body as ChatBody;
    const tokens = answerTokens(body);
    if (body.stream) return this.stream(request, response, body.model, tokens);
    sendJson(response, 200, {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 0,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: tokens.join('') }, finish_reason: 'stop' }],
      usage: FAKE_USAGE,
    });
  };

  private async stream(request: RecordedRequest, response: ServerResponse, model: string, tokens: string[]): Promise<void> {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (choices: unknown[], usage: unknown = null) =>
      response.write(`data: ${JSON.stringify({ id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 0, model, choices, usage })}\n\n`);
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    if (this.holdStreamOpen) {
      // The first sentence whole and the next one begun: the service sends a sentence once the next begins.
      for (const text of tokens.slice(0, -2)) chunk([{ index: 0, delta: { content: text }, finish_reason: null }]);
      return request.clientGone; // the test checks that the service closes this connection
    }
    for (const text of tokens) chunk([{ index: 0, delta: { content: text }, finish_reason: null }]);
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    chunk([], FAKE_USAGE);
    response.end('data: [DONE]\n\n');
  }
}

/**
 * The first sentence of the prompt's first passage, cited by that passage's label, then an invented label.
 * The passage is read as the prompt's documented format says (`<<<PASSAGE <hex value> [P1]>>>`, its
 * `<source> > <headings>` line, its text; the first line of five words or more is restated), by its own pattern.
 */
function answerTokens(body: ChatBody): string[] {
  const prompt = body.messages.map((message) => message.content).join('\n');
  const passage = /^<<<PASSAGE [0-9a-f]{24} \[(P\d+)\]>>>\n[^\n]*\n(?:[^\n]*\n)*?((?:\S+ ){4}[^\n]*)/m.exec(prompt);
  const label = passage?.[1] ?? 'none#0';
  const sentence = (passage?.[2] ?? 'The handbook says yes.').replace(/^[-*#>\s]+/, '').split(/(?<=[.!?])\s/)[0]!.replace(/[.!?]+$/, '');
  const words = sentence.split(' ');
  const half = Math.ceil(words.length / 2);
  return [`${words.slice(0, half).join(' ')} `, words.slice(half).join(' '), ` [${label}]`, '. See ', `[${INVENTED_LABEL}]`, '.'];
}

export function gatewayError(response: ServerResponse, status: number, message: string): void {
  sendJson(response, status, { error: { message, type: 'server_error', code: status } });
}
