/**
 * An OpenAI-compatible gateway (https://platform.openai.com/docs/api-reference/chat, non-streaming and
 * streaming as FakeGateway) that tells the suite's two kinds of call apart: a condense call (its system
 * message is the condense rules) gets the scripted query, or `condenseStatus` as an error; any other call
 * gets FakeGateway's answer citing the prompt's first passage.
 */
import type { ServerResponse } from 'node:http';
import { sendJson, type RecordedRequest } from '../../../../packages/core/test/adapters/fake-server.ts';
import { FakeGateway, FAKE_USAGE, gatewayError } from './fake-gateway.ts';

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: string }>;
  max_tokens?: number;
}

export function isCondenseCall(body: unknown): boolean {
  return ((body as ChatBody).messages?.[0]?.content ?? '').startsWith('You rewrite the last question of a conversation');
}

export class CondensingGateway {
  /** What a condense call answers. */
  condensed = 'how to restore a database snapshot';
  /** When set, condense calls fail with this HTTP status (the answer calls still succeed). */
  condenseStatus: number | undefined;
  private readonly answers = new FakeGateway();

  handle = async (request: RecordedRequest, response: ServerResponse): Promise<void> => {
    if (request.method !== 'POST' || !isCondenseCall(request.body)) return this.answers.handle(request, response);
    if (this.condenseStatus !== undefined) return gatewayError(response, this.condenseStatus, 'condense refused');
    const body = request.body as ChatBody;
    sendJson(response, 200, {
      id: 'chatcmpl-c',
      object: 'chat.completion',
      created: 0,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: this.condensed }, finish_reason: 'stop' }],
      usage: FAKE_USAGE,
    });
  };
}
