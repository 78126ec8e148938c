import { assertConversationBounds, RagError, turnsFromHistory, type ConversationTurn } from '@rag/core';
import { z } from 'zod';
import { parseQueryRequest, type QueryRequest } from './request-schema.ts';

/**
 * The earlier turns of a /chat request. `history: [{question, answer}]`, oldest first, is the primary
 * shape (the question itself stays in `query`); `messages` in OpenAI's shape is accepted too, and then
 * its last user message is the question when `query` is absent. System messages are not used.
 */
const historySchema = z.array(z.object({ question: z.string(), answer: z.string() }).strict());
const messagesSchema = z.array(z.object({ role: z.enum(['user', 'assistant', 'system']), content: z.string() }).strict());

export interface ChatRequest extends QueryRequest {
  earlier: ConversationTurn[];
}

export function parseChatRequest(body: unknown): ChatRequest {
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  if (fields?.['history'] !== undefined && fields['messages'] !== undefined) {
    throw new RagError('RAG_INVALID_CONVERSATION', 'Send either "history" or "messages", not both.');
  }
  const { question, earlier } = conversationOf(fields);
  const request = parseQueryRequest(question === undefined ? body : { ...fields, query: question });
  assertConversationBounds(earlier);
  return { ...request, earlier };
}

function conversationOf(fields: Record<string, unknown> | undefined): { question?: string; earlier: ConversationTurn[] } {
  if (fields?.['history'] !== undefined) {
    const history = historySchema.safeParse(fields['history']);
    if (!history.success) throw new RagError('RAG_INVALID_CONVERSATION', describe(history.error, 'history'));
    return { earlier: turnsFromHistory(history.data) };
  }
  if (fields?.['messages'] === undefined) return { earlier: [] };
  const messages = messagesSchema.safeParse(fields['messages']);
  if (!messages.success) throw new RagError('RAG_INVALID_CONVERSATION', describe(messages.error, 'messages'));
  const turns = messages.data.flatMap((message) => (message.role === 'system' ? [] : [{ role: message.role, content: message.content }]));
  if (fields['query'] !== undefined) return { earlier: turns };
  const last = turns.at(-1);
  if (last?.role !== 'user') throw new RagError('RAG_NO_QUESTION', 'Without "query", the last message must be the user\'s question.');
  return { question: last.content, earlier: turns.slice(0, -1) };
}

function describe(error: z.ZodError, field: string): string {
  const issue = error.issues[0]!;
  return `"${[field, ...issue.path].join('.')}": ${issue.message}.`;
}
