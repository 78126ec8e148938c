import type { AnswerStreamEvent, Answerer, ChatAnswer, Citation, WithheldPassage } from '@rag/core';
import { pageFields, parseSearchControls, toRagError } from '@rag/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, logRequestError } from '../error-handler.ts';
import { groundingField } from '../grounding-json.ts';
import { abortOnClientClose } from '../request-abort.ts';
import { parseChatRequest } from '../conversation-request.ts';
import type { OpenGate } from '../store-gate.ts';
import { rerankedField, visibleGroupsOf } from './search.ts';

function citationJson(citation: Citation) {
  return { source: citation.source, heading_path: citation.headingPath, chunk_index: citation.chunkIndex, score: citation.score, ...pageFields(citation.pages) };
}

function answerJson(answer: ChatAnswer) {
  return {
    answer: answer.answer,
    citations: answer.citations.map(citationJson),
    mode: answer.mode,
    ...rerankedField(answer.reranked),
    ...searchQueryField(answer.searchQuery),
    ...(answer.unknownCitations.length > 0 ? { unknown_citations: answer.unknownCitations } : {}),
    ...groundingField(answer.grounding),
    ...withheldField(answer.withheld),
    ...(answer.usage
      ? { usage: { prompt_tokens: answer.usage.promptTokens, completion_tokens: answer.usage.completionTokens, total_tokens: answer.usage.totalTokens } }
      : {}),
  };
}

/** Passages retrieved and kept out of the answer because they are written to the model (SUSPECT_PASSAGES). */
export function withheldField(withheld: readonly WithheldPassage[] | undefined): { withheld?: Array<{ source: string; heading_path: string; chunk_index: number; signals: string[] }> } {
  return withheld && withheld.length > 0 ? { withheld: withheld.map((passage) => ({ source: passage.source, heading_path: passage.headingPath, chunk_index: passage.chunkIndex, signals: passage.signals })) } : {};
}

/** What a follow-up was searched for with (condensed or expanded from the earlier turns); absent without them. */
function searchQueryField(searchQuery: string | undefined): { search_query?: string } {
  return searchQuery === undefined ? {} : { search_query: searchQuery };
}

function wantsStream(request: FastifyRequest, stream: boolean): boolean {
  return stream || (request.headers.accept ?? '').includes('text/event-stream');
}

function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function streamFrame(event: AnswerStreamEvent): string {
  if (event.type === 'citations') return sseFrame('citations', { citations: event.citations.map(citationJson), ...rerankedField(event.reranked), ...searchQueryField(event.searchQuery) });
  if (event.type === 'token') return sseFrame('token', { text: event.text });
  return sseFrame('done', answerJson(event.answer));
}

/**
 * Server-Sent Events: `citations`, then `token`s, then `done` with the usage. A failure before the
 * first byte is a normal JSON error; after it, an `error` event. Closing the connection aborts upstream.
 */
async function streamAnswer(reply: FastifyReply, events: AsyncIterable<AnswerStreamEvent>): Promise<void> {
  const iterator = events[Symbol.asyncIterator]();
  const first = await iterator.next();
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  try {
    for (let step = first; !step.done; step = await iterator.next()) reply.raw.write(streamFrame(step.value));
  } catch (error) {
    // The response is hijacked: the error handler never sees this failure, so it is logged here.
    const httpError = toRagError(error);
    logRequestError(reply.log, httpError);
    if (!reply.raw.destroyed) reply.raw.write(sseFrame('error', errorBody(httpError).error));
  } finally {
    reply.raw.end();
  }
}

export function registerChatRoute(app: FastifyInstance, deps: { answerer: Answerer; storeGate?: OpenGate | undefined; defaultK: number }): void {
  app.post('/chat', async (request, reply) => {
    const { query, k, stream, earlier } = parseChatRequest(request.body);
    const controls = parseSearchControls(request.body as Record<string, unknown>);
    const signal = abortOnClientClose(reply);
    // Before any stream starts, so that a store still unopened is a plain JSON 503, not an SSE error event.
    await deps.storeGate?.ready(signal);
    const visibleGroups = visibleGroupsOf(request);
    if (wantsStream(request, stream)) return streamAnswer(reply, deps.answerer.stream(query, k ?? deps.defaultK, visibleGroups, signal, earlier, controls));
    return answerJson(await deps.answerer.answer(query, k ?? deps.defaultK, visibleGroups, signal, earlier, controls));
  });
}
