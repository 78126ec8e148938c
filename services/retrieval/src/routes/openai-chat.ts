import { randomUUID } from 'node:crypto';
import { pageFields, parseSearchControls, RagError, recentTurns, toRagError, type AnswerStreamEvent, type Answerer, type ChatAnswer, type Citation, type ConversationTurn, type SearchControls } from '@rag/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { clientMessage, logRequestError, toHttpError } from '../error-handler.ts';
import { groundingField } from '../grounding-json.ts';
import { chatCompletionRequest, RAG_MODEL_ID, type chatCompletionMessage } from '../openai-schemas.ts';
import { abortOnClientClose } from '../request-abort.ts';
import { MAX_QUERY_LENGTH } from '../request-schema.ts';
import type { OpenGate } from '../store-gate.ts';
import { withheldField } from './chat.ts';
import { visibleGroupsOf } from './search.ts';

/** When the model "was created", as /v1/models reports it: fixed, so answers are reproducible. */
const MODEL_CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z

type Message = z.infer<typeof chatCompletionMessage>;

function textOf(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  if (!Array.isArray(message.content)) return '';
  return message.content.map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('\n');
}

/**
 * The question is the last user message; the user and assistant messages before it are the earlier turns.
 * OpenAI clients send the whole thread every time, so a long one is cut to its most recent turns within
 * the bounds rather than refused. System, developer and tool messages are not used (docs/api.md).
 */
function conversationOf(messages: Message[]): { question: string; earlier: ConversationTurn[] } {
  const lastUser = messages.findLastIndex((message) => message.role === 'user');
  const question = lastUser >= 0 ? textOf(messages[lastUser]!).trim() : '';
  if (question === '') throw new RagError('RAG_NO_QUESTION');
  if (question.length > MAX_QUERY_LENGTH) throw new RagError('RAG_INVALID_QUERY', `It has ${question.length} characters.`);
  const turns = messages
    .slice(0, lastUser)
    .flatMap((message) => (message.role === 'user' || message.role === 'assistant' ? [{ role: message.role, content: textOf(message) }] : []))
    .filter((turn) => turn.content.trim() !== '');
  return { question, earlier: recentTurns(turns) };
}

function parseRequest(body: unknown): { question: string; earlier: ConversationTurn[]; stream: boolean; controls: SearchControls } {
  if (body === undefined || body === null || body === '') throw new RagError('RAG_EMPTY_BODY');
  const parsed = chatCompletionRequest.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RagError('RAG_INVALID_REQUEST', `"${issue.path.join('.')}": ${issue.message}.`);
  }
  if (parsed.data.model !== RAG_MODEL_ID) throw new RagError('RAG_UNKNOWN_MODEL', `Got "${parsed.data.model}".`);
  // filter, max_per_source and freshness as extra body fields (the OpenAI SDKs send them with extra_body / a cast).
  return { ...conversationOf(parsed.data.messages), stream: parsed.data.stream === true, controls: parseSearchControls(parsed.data) };
}

function citationJson(citation: Citation) {
  return { source: citation.source, heading_path: citation.headingPath, chunk_index: citation.chunkIndex, score: citation.score, label: `[${citation.source}#${citation.chunkIndex}]`, ...pageFields(citation.pages) };
}

/** OpenAI's `type` for a status; `code` carries ours. */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function openAiErrorBody(error: RagError) {
  return { error: { message: clientMessage(error), type: errorType(error.status), param: null, code: error.code } };
}

function completionJson(id: string, created: number, answer: ChatAnswer) {
  return {
    id,
    object: 'chat.completion' as const,
    created,
    model: RAG_MODEL_ID,
    choices: [{ index: 0, message: { role: 'assistant' as const, content: answer.answer }, finish_reason: 'stop' as const }],
    ...(answer.usage
      ? { usage: { prompt_tokens: answer.usage.promptTokens, completion_tokens: answer.usage.completionTokens, total_tokens: answer.usage.totalTokens } }
      : {}),
    citations: answer.citations.map(citationJson),
    ...unknownCitationsField(answer),
    rag: {
      mode: answer.mode,
      ...(answer.reranked === undefined ? {} : { reranked: answer.reranked }),
      ...(answer.searchQuery === undefined ? {} : { search_query: answer.searchQuery }),
      ...groundingField(answer.grounding),
      ...withheldField(answer.withheld),
    },
  };
}

/** Labels the answer cites that match no passage given, as /chat reports them; absent when there are none. */
function unknownCitationsField(answer: Pick<ChatAnswer, 'unknownCitations'>): { unknown_citations?: string[] } {
  return answer.unknownCitations.length > 0 ? { unknown_citations: answer.unknownCitations } : {};
}

function chunkFrame(id: string, created: number, delta: { role?: 'assistant'; content?: string }, finished: boolean, answer?: Pick<ChatAnswer, 'citations' | 'unknownCitations' | 'grounding'>): string {
  const chunk = {
    id,
    object: 'chat.completion.chunk',
    created,
    model: RAG_MODEL_ID,
    choices: [{ index: 0, delta, finish_reason: finished ? 'stop' : null }],
    ...(answer ? { citations: answer.citations.map(citationJson), ...unknownCitationsField(answer), ...groundingField(answer.grounding) } : {}),
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function eventFrame(id: string, created: number, event: AnswerStreamEvent): string {
  if (event.type === 'citations') return chunkFrame(id, created, { role: 'assistant', content: '' }, false, { citations: event.citations, unknownCitations: [] });
  if (event.type === 'token') return chunkFrame(id, created, { content: event.text }, false);
  return chunkFrame(id, created, {}, true, event.answer);
}

/** `chat.completion.chunk` events, then `data: [DONE]`; a failure after the first byte is a `data: {"error"}` event. */
async function streamCompletion(reply: FastifyReply, id: string, created: number, events: AsyncIterable<AnswerStreamEvent>): Promise<void> {
  const iterator = events[Symbol.asyncIterator]();
  // A failure before the first event (store down, bad key…) is still a plain JSON error with its status.
  const first = await iterator.next();
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  try {
    for (let step = first; !step.done; step = await iterator.next()) reply.raw.write(eventFrame(id, created, step.value));
    reply.raw.write('data: [DONE]\n\n');
  } catch (error) {
    const httpError = toRagError(error);
    logRequestError(reply.log, httpError);
    if (!reply.raw.destroyed) reply.raw.write(`data: ${JSON.stringify(openAiErrorBody(httpError))}\n\n`);
  } finally {
    reply.raw.end();
  }
}

export interface OpenAiRouteDependencies {
  answerer: Answerer;
  storeGate?: OpenGate | undefined;
  defaultK: number;
}

/**
 * POST /v1/chat/completions and GET /v1/models, so that chat front-ends speaking OpenAI's API (Open
 * WebUI, LibreChat, the OpenAI SDKs) can use the suite as a model named "rag". Errors, the keys' 401 and
 * 429 included, use OpenAI's error shape with our code.
 */
export function registerOpenAiRoutes(app: FastifyInstance, deps: OpenAiRouteDependencies): void {
  app.register(async (v1) => {
    v1.setErrorHandler((error, request: FastifyRequest, reply) => {
      const httpError = toHttpError(error);
      logRequestError(request.log, httpError);
      return reply.status(httpError.status).send(openAiErrorBody(httpError));
    });
    v1.get('/v1/models', async () => ({
      object: 'list',
      data: [{ id: RAG_MODEL_ID, object: 'model', created: MODEL_CREATED, owned_by: 'rag-suite' }],
    }));
    v1.post('/v1/chat/completions', async (request, reply) => {
      const { question, earlier, stream, controls } = parseRequest(request.body);
      const signal = abortOnClientClose(reply);
      await deps.storeGate?.ready(signal);
      const visibleGroups = visibleGroupsOf(request);
      const id = `chatcmpl-${randomUUID()}`;
      const created = Math.floor(Date.now() / 1000);
      if (stream) return streamCompletion(reply, id, created, deps.answerer.stream(question, deps.defaultK, visibleGroups, signal, earlier, controls));
      return completionJson(id, created, await deps.answerer.answer(question, deps.defaultK, visibleGroups, signal, earlier, controls));
    });
  });
}
