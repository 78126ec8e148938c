import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { assertConversationBounds, freshnessSchema, maxPerSourceSchema, pageFields, searchFilterSchema, toFreshnessBoost, toRagError, toSearchFilter, turnsFromHistory, type Answerer, type Chunk, type PassageReader, type Retriever, type SearchHit } from '@rag/core';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { clientMessage, logRequestError } from '../error-handler.ts';
import { pageShape } from '../api-schemas.ts';
import { groundingField, groundingSchema } from '../grounding-json.ts';
import { MAX_QUERY_LENGTH } from '../request-schema.ts';
import type { OpenGate } from '../store-gate.ts';

/** What the tools read, and whose documents they may show: one caller per MCP server instance. */
export interface McpToolContext {
  retriever: Retriever;
  answerer: Answerer;
  passages: PassageReader;
  storeGate?: OpenGate | undefined;
  defaultK: number;
  /** The caller's groups (see routes/search.ts visibleGroupsOf): every tool shows public documents and these only. */
  visibleGroups: readonly string[];
  /** Where a failed tool call's detail is written (the client gets the code and clientMessage only). */
  logger?: FastifyBaseLogger | undefined;
}

/** Reported to MCP clients in the initialize handshake. */
export const MCP_SERVER_INFO = { name: 'rag-suite', version: '0.1.0' };

/** Candidates searched when a source prefix narrows the results, so k of them can remain after filtering. */
const PREFIX_CANDIDATES = 50;

const passageShape = {
  source: z.string().describe('document path or URI, e.g. docs/retrieval.md'),
  heading_path: z.string().describe('the headings above the passage, "A > B"'),
  chunk_index: z.number().int().describe('position of the passage in its document, from 0'),
  text: z.string(),
  ...pageShape,
};
const scoredPassage = z.object({ ...passageShape, score: z.number(), title: z.string().optional().describe("the document's title") });
const citation = z.object({ source: z.string(), heading_path: z.string(), chunk_index: z.number().int(), score: z.number(), label: z.string(), ...pageShape });
const chunkObject = z.object(passageShape);

function passageJson(chunk: Chunk) {
  return { source: chunk.source, heading_path: chunk.headingPath, chunk_index: chunk.chunkIndex, text: chunk.text, ...pageFields(chunk.pages) };
}

function scoredJson(hit: SearchHit) {
  return { ...passageJson(hit), score: hit.score, ...(hit.title === undefined ? {} : { title: hit.title }) };
}

/** A tool's answer: the structured content, and the same as text for clients that read text only. */
function result(structured: Record<string, unknown>, text: string): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text }] };
}

/** A failure as an MCP tool error (isError), carrying the registry's code so an agent can act on it. */
function toolError(error: unknown, logger: FastifyBaseLogger | undefined): CallToolResult {
  const ragError = toRagError(error);
  if (logger) logRequestError(logger, ragError);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code: ragError.code, message: clientMessage(ragError) } }) }] };
}

async function guarded(run: () => Promise<CallToolResult>, logger?: FastifyBaseLogger): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    return toolError(error, logger);
  }
}

function formatPassages(passages: Array<ReturnType<typeof scoredJson>>): string {
  if (passages.length === 0) return 'No passage matches.';
  return passages.map((p) => `[${p.source}#${p.chunk_index}] (${p.heading_path}${p.page === undefined ? '' : `, p. ${p.page}`}, score ${p.score.toFixed(3)})\n${p.text}`).join('\n\n---\n\n');
}

/**
 * The four tools of the suite over one caller's view of the index; stdio and HTTP (/mcp) both build it.
 * Each passes the SDK's `extra.signal` (aborted by notifications/cancelled or a closed transport) down to
 * its dependency calls, so a call nobody waits for any more stops.
 */
export function createMcpServer(context: McpToolContext): McpServer {
  const server = new McpServer(MCP_SERVER_INFO);
  const { retriever, answerer, passages, storeGate, defaultK, visibleGroups, logger } = context;

  server.registerTool(
    'search',
    {
      title: 'Search the documents',
      description:
        'Find passages of the indexed documents that match a query (hybrid BM25 + dense search, reranked when configured). Returns the passages themselves with source, heading path, chunk index and score. Use it to read what the documents say and cite them; use `ask` instead for a ready-written answer.',
      inputSchema: {
        query: z.string().trim().min(1).max(MAX_QUERY_LENGTH).describe('what to look for, in natural language or keywords'),
        k: z.number().int().min(1).max(50).optional().describe(`how many passages (default ${defaultK})`),
        source_prefix: z.string().optional().describe('keep only passages whose source starts with this, e.g. "docs/" (see list_sources)'),
        filter: searchFilterSchema.optional().describe('search only these documents: {source: glob, type, modified_after, modified_before, meta} (as POST /search)'),
        max_per_source: maxPerSourceSchema.optional(),
        freshness: freshnessSchema.optional(),
      },
      outputSchema: { passages: z.array(scoredPassage), reranked: z.boolean().optional() },
    },
    ({ query, k, source_prefix: prefix, filter, max_per_source: maxPerSource, freshness }, { signal }) =>
      guarded(async () => {
        await storeGate?.ready(signal);
        const wanted = k ?? defaultK;
        const controls = { filter: filter && toSearchFilter(filter), maxPerSource, freshness: freshness && toFreshnessBoost(freshness) };
        const { hits, reranked } = await retriever.retrieve(query, prefix ? Math.max(PREFIX_CANDIDATES, wanted) : wanted, visibleGroups, signal, controls);
        const found = (prefix ? hits.filter((hit) => hit.source.startsWith(prefix)) : hits).slice(0, wanted).map(scoredJson);
        return result({ passages: found, ...(reranked === undefined ? {} : { reranked }) }, formatPassages(found));
      }, logger),
  );

  server.registerTool(
    'ask',
    {
      title: 'Ask a question',
      description: `Answer a question from the indexed documents, with [source#chunk] citations (${answerer.mode === 'llm' ? 'written by the LLM gateway' : 'extractive: quoted sentences'}). Says plainly when the documents do not cover the question. Use it for a direct answer; use \`search\` to read passages yourself.`,
      inputSchema: {
        question: z.string().trim().min(1).max(MAX_QUERY_LENGTH).describe('the question, as a user would ask it'),
        k: z.number().int().min(1).max(50).optional().describe(`passages to answer from (default ${defaultK})`),
        history: z
          .array(z.object({ question: z.string(), answer: z.string() }))
          .optional()
          .describe('earlier questions and answers of this conversation, oldest first (at most 10 pairs, 16000 characters): a follow-up such as "and how do I turn it off?" is searched for with them'),
        filter: searchFilterSchema.optional().describe('answer only from these documents (as POST /search)'),
        max_per_source: maxPerSourceSchema.optional(),
        freshness: freshnessSchema.optional(),
      },
      outputSchema: {
        answer: z.string(),
        citations: z.array(citation),
        mode: z.enum(['llm', 'extractive']),
        covered: z.boolean(),
        search_query: z.string().optional(),
        grounding: groundingSchema.optional(),
      },
    },
    ({ question, k, history, filter, max_per_source: maxPerSource, freshness }, { signal }) =>
      guarded(async () => {
        const earlier = turnsFromHistory(history ?? []);
        assertConversationBounds(earlier);
        await storeGate?.ready(signal);
        const answer = await answerer.answer(question, k ?? defaultK, visibleGroups, signal, earlier, {
          filter: filter && toSearchFilter(filter),
          maxPerSource,
          freshness: freshness && toFreshnessBoost(freshness),
        });
        const citations = answer.citations.map((c) => ({
          source: c.source,
          heading_path: c.headingPath,
          chunk_index: c.chunkIndex,
          score: c.score,
          label: `[${c.source}#${c.chunkIndex}]`,
          ...pageFields(c.pages),
        }));
        const sources = citations.length > 0 ? `\n\nSources:\n${citations.map((c) => `${c.label} ${c.heading_path}`).join('\n')}` : '';
        const searchQuery = answer.searchQuery === undefined ? {} : { search_query: answer.searchQuery };
        const warning = answer.grounding && !answer.grounding.grounded ? `\n\nNot grounded: ${answer.grounding.counts.unsupported} sentence(s) are supported by no passage given.` : '';
        return result({ answer: answer.answer, citations, mode: answer.mode, covered: citations.length > 0, ...searchQuery, ...groundingField(answer.grounding) }, `${answer.answer}${sources}${warning}`);
      }, logger),
  );

  server.registerTool(
    'list_sources',
    {
      title: 'List the indexed documents',
      description: 'List the documents you can read in the index, with their number of passages (chunks). Use it to learn what the collection covers or to find a source for `search`\'s source_prefix or `get_passage`.',
      inputSchema: { prefix: z.string().optional().describe('keep only sources starting with this') },
      outputSchema: { sources: z.array(z.object({ source: z.string(), chunks: z.number().int() })) },
    },
    ({ prefix }, { signal }) =>
      guarded(async () => {
        await storeGate?.ready(signal);
        const sources = await passages.listSources(visibleGroups, prefix);
        return result({ sources }, sources.length === 0 ? 'No document.' : sources.map((s) => `${s.source} (${s.chunks} chunks)`).join('\n'));
      }, logger),
  );

  server.registerTool(
    'get_passage',
    {
      title: 'Read a passage',
      description:
        'Read one passage by its source and chunk index (as in a [source#chunk] citation or a search result), with the passages just before and after it for context.',
      inputSchema: {
        source: z.string().min(1).describe('the passage\'s source, e.g. docs/api.md'),
        chunk_index: z.number().int().min(0).describe('the chunk index'),
        neighbours: z.number().int().min(0).max(5).optional().describe('passages to include on each side (default 1)'),
      },
      outputSchema: { passage: chunkObject, before: z.array(chunkObject), after: z.array(chunkObject) },
    },
    ({ source, chunk_index: chunkIndex, neighbours }, { signal }) =>
      guarded(async () => {
        await storeGate?.ready(signal);
        const found = await passages.passage(source, chunkIndex, visibleGroups, neighbours ?? 1, signal);
        const structured = { passage: passageJson(found.passage), before: found.before.map(passageJson), after: found.after.map(passageJson) };
        const context = [...found.before, found.passage, ...found.after];
        return result(structured, context.map((c) => `[${c.source}#${c.chunkIndex}] ${c.headingPath}\n${c.text}`).join('\n\n---\n\n'));
      }, logger),
  );

  return server;
}
