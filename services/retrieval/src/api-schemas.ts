import { errorCatalog, freshnessSchema, maxPerSourceSchema, searchFilterSchema, type ErrorCode } from '@rag/core';
import { z } from 'zod';
import { groundingSchema } from './grounding-json.ts';
import { MAX_QUERY_LENGTH } from './request-schema.ts';

/**
 * The native routes' bodies as zod schemas, for /openapi.json. Requests are validated by
 * request-schema.ts, which gives each kind of bad input its own code; these schemas state the same rules.
 */

export const queryRequest = z.object({
  query: z.string().min(1).max(MAX_QUERY_LENGTH).describe('the question or search terms'),
  k: z.number().int().min(1).max(50).optional().describe('passages to return or answer from (default TOP_K)'),
  stream: z.boolean().optional().describe('POST /chat only: answer as Server-Sent Events'),
  filter: searchFilterSchema.optional().describe('search only these documents (every field optional, they AND; a list matches any of its values); a bad field: 400 RAG_INVALID_FILTER'),
  max_per_source: maxPerSourceSchema.optional(),
  freshness: freshnessSchema.optional().describe('favour recently modified documents: fused score + weight · 0.5^(age / half_life); a bad field: 400 RAG_INVALID_FRESHNESS'),
});

/** POST /chat: the question with the conversation's earlier turns (conversation-request.ts reads them). */
export const chatRequest = queryRequest.extend({
  query: queryRequest.shape.query.optional().describe('the question; may be left out when "messages" ends with it'),
  history: z
    .array(z.object({ question: z.string(), answer: z.string() }))
    .max(10)
    .optional()
    .describe('the earlier turns, oldest first (at most 20 turns, 16000 characters in all)'),
  messages: z
    .array(z.object({ role: z.enum(['user', 'assistant', 'system']), content: z.string() }))
    .optional()
    .describe('instead of history: the conversation in OpenAI\'s shape; its last user message is the question when "query" is absent; system messages are not used'),
});

/** A paged document's result or citation (PDF pages, PPTX slides); both absent for other documents. */
export const pageShape = {
  page: z.number().int().min(1).optional().describe('PDF page or PPTX slide where the passage starts, from 1; absent for documents without pages'),
  pages: z.array(z.number().int().min(1)).optional().describe('every page the passage touches, ascending; present only when it spans more than one'),
};

const reranked = z.boolean().optional().describe('only with a reranker: false when the results are in the fused order');

export const searchResponse = z.object({
  results: z.array(
    z.object({
      source: z.string(),
      heading_path: z.string(),
      chunk_index: z.number().int(),
      score: z.number(),
      fusion_score: z.number(),
      text: z.string(),
      ...pageShape,
      boxes: z
        .array(z.object({ page: z.number().int().min(1), l: z.number(), t: z.number(), r: z.number(), b: z.number(), origin: z.enum(['TOPLEFT', 'BOTTOMLEFT']) }))
        .optional()
        .describe("where on its pages the passage's items lie, as docling-serve gives them (its prov bbox; PDF points for a PDF; origin is the corner y counts from); absent when unknown"),
      title: z.string().optional().describe("the document's title: its first H1, HTML <title> or docling's title, else the file name; absent for a document indexed before titles"),
    }),
  ),
  reranked,
});

const citation = z.object({ source: z.string(), heading_path: z.string(), chunk_index: z.number().int(), score: z.number(), ...pageShape });

/** SUSPECT_PASSAGES=withhold: retrieved passages written to the model, kept out of the answer. */
export const withheldSchema = z
  .array(z.object({ source: z.string(), heading_path: z.string(), chunk_index: z.number().int(), signals: z.array(z.string()).describe('what the passage says to the model, e.g. "overrides its instructions"') }))
  .describe('retrieved passages kept out of the answer because they are written to the answering model (SUSPECT_PASSAGES); absent when none');

export const chatResponse = z.object({
  answer: z.string(),
  citations: z.array(citation),
  mode: z.enum(['llm', 'extractive']),
  reranked,
  search_query: z.string().optional().describe('with earlier turns: what was searched for (the follow-up condensed by the gateway, or expanded from the previous question)'),
  unknown_citations: z.array(z.string()).optional(),
  grounding: groundingSchema.optional(),
  withheld: withheldSchema.optional(),
  usage: z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() }).optional(),
});

/** GET /documents/<source> asked for JSON (Accept: application/json) where the document is elsewhere: a page can open the signed URL itself. */
export const documentLinkResponse = z.object({
  url: z.string().url().describe('where the document is read: a V4 signed URL for a gs:// source'),
  expires_at: z.string().datetime().optional().describe('when the URL stops working (RFC 3339)'),
});

export const healthResponse = z.object({ status: z.literal('ok') });

export const readyResponse = z.object({
  status: z.enum(['ready', 'degraded']),
  checks: z.record(z.string()).describe('dependency → "ok" or the error code of its failure'),
  degraded: z.array(z.string()).optional(),
  details: z
    .object({ gateway: z.object({ structured_output: z.enum(['json_schema', 'off', 'undecided']).describe('GATEWAY_STRUCTURED: answers asked as JSON under a schema, as free text, or free text until the canary reaches the gateway') }) })
    .optional()
    .describe('with GATEWAY_URL'),
});

const errorCodes = Object.keys(errorCatalog) as [ErrorCode, ...ErrorCode[]];

export const errorResponse = z.object({
  error: z.object({ code: z.enum(errorCodes), message: z.string() }),
  dependency: z.string().optional().describe('GET /readyz: the first dependency failing'),
  checks: z.record(z.string()).optional(),
});

/** A JSON-RPC 2.0 message of the MCP protocol (https://modelcontextprotocol.io/specification). */
export const jsonRpcMessage = z.object({ jsonrpc: z.literal('2.0') }).passthrough();
