import { z } from 'zod';
import { withheldSchema } from './api-schemas.ts';
import { groundingSchema } from './grounding-json.ts';

/**
 * The OpenAI-compatible surface (/v1/models, /v1/chat/completions) as zod schemas: the route validates
 * requests with them and /openapi.json documents them. Only the fields we read or send are listed;
 * requests may carry any other OpenAI field (temperature, max_tokens…), which is accepted and ignored.
 */

/** The one model this API serves: retrieval + an answer with citations. */
export const RAG_MODEL_ID = 'rag';

const contentPart = z.object({ type: z.string(), text: z.string().optional() }).passthrough();

export const chatCompletionMessage = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
    content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
  })
  .passthrough();

export const chatCompletionRequest = z
  .object({
    model: z.string().describe(`"${RAG_MODEL_ID}"`),
    messages: z.array(chatCompletionMessage).min(1).describe('the last user message is the question; the user and assistant messages before it are the conversation (the most recent 20 turns, 16000 characters)'),
    stream: z.boolean().optional(),
  })
  .passthrough();

export const ragCitation = z.object({
  source: z.string(),
  heading_path: z.string(),
  chunk_index: z.number().int(),
  score: z.number(),
  /** The label the answer text uses: `[source#chunk_index]`. */
  label: z.string(),
  /** Our extension, as /chat's citations: the page or slide where a paged document's passage starts, and all of them when several. */
  page: z.number().int().min(1).optional(),
  pages: z.array(z.number().int().min(1)).optional(),
});

const unknownCitations = z.array(z.string()).describe('our extension: labels the answer cites that match no passage given, never shown as sources');

const usage = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() });

export const chatCompletion = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.literal(RAG_MODEL_ID),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({ role: z.literal('assistant'), content: z.string() }),
      finish_reason: z.literal('stop'),
    }),
  ),
  usage: usage.optional(),
  citations: z.array(ragCitation).describe('our extension: the passages the answer cites, in order'),
  unknown_citations: unknownCitations.optional(),
  rag: z
    .object({
      mode: z.enum(['llm', 'extractive']),
      reranked: z.boolean().optional(),
      search_query: z.string().optional().describe('with earlier messages: what the follow-up was searched for (condensed or expanded)'),
      grounding: groundingSchema.optional(),
      withheld: withheldSchema.optional(),
    })
    .describe('our extension: how the answer was made'),
});

export const chatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.literal(RAG_MODEL_ID),
  choices: z.array(
    z.object({
      index: z.number().int(),
      delta: z.object({ role: z.literal('assistant').optional(), content: z.string().optional() }),
      finish_reason: z.literal('stop').nullable(),
    }),
  ),
  citations: z.array(ragCitation).optional().describe('sent on the first chunk (passages retrieved) and the last (passages cited)'),
  unknown_citations: unknownCitations.optional().describe('on the last chunk, as in a chat.completion'),
  grounding: groundingSchema.optional().describe('on the last chunk of a generated answer, as rag.grounding in a chat.completion'),
});

export const modelList = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.literal(RAG_MODEL_ID), object: z.literal('model'), created: z.number().int(), owned_by: z.string() })),
});

/** OpenAI's error shape; `code` is ours (docs/errors.md). */
export const openAiError = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string() }),
});
