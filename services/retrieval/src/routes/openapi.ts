import { errorCatalog, type ErrorCode } from '@rag/core';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeAny } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';
import { chatRequest, chatResponse, documentLinkResponse, errorResponse, healthResponse, jsonRpcMessage, queryRequest, readyResponse, searchResponse } from '../api-schemas.ts';
import { chatCompletion, chatCompletionChunk, chatCompletionRequest, modelList, openAiError } from '../openai-schemas.ts';

/**
 * GET /openapi.json: OpenAPI 3.1 built from the zod schemas the routes use (zod-to-json-schema, JSON
 * Schema draft 7, which 3.1 accepts as is). Built here rather than by @fastify/swagger from route
 * schemas, because a route schema makes Fastify validate with its own errors, and ours carry our codes.
 */

function jsonSchema(schema: ZodTypeAny): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = zodToJsonSchema(schema, { target: 'jsonSchema7', $refStrategy: 'none' }) as Record<string, unknown>;
  return rest;
}

const json = (schema: ZodTypeAny) => ({ 'application/json': { schema: jsonSchema(schema) } });

/** Every error code, grouped by status: one response per status, its description naming the codes. */
function errorResponses(errorBody: ZodTypeAny) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const [code, { status }] of Object.entries(errorCatalog) as Array<[ErrorCode, { status: number }]>) {
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, codes]) => [String(status), { description: codes.join(', '), content: json(errorBody) }]));
}

const sse = (description: string) => ({ 'text/event-stream': { schema: { type: 'string', description } } });
const keyed = [{ bearer: [] as string[] }];

export function openApiDocument(): Record<string, unknown> {
  const dataErrors = errorResponses(errorResponse);
  const v1Errors = errorResponses(openAiError);
  return {
    openapi: '3.1.0',
    info: { title: 'rag-suite retrieval API', version: '0.1.0', description: 'Hybrid search and cited answers over indexed documents. Error codes: docs/errors.md.' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Needed when RAG_AUTH_FILE is set' } } },
    paths: {
      '/search': {
        post: {
          summary: 'Ranked passages for a query',
          security: keyed,
          requestBody: { required: true, content: json(queryRequest) },
          responses: { 200: { description: 'passages, best first', content: json(searchResponse) }, ...dataErrors },
        },
      },
      '/chat': {
        post: {
          summary: 'An answer with citations (JSON, or Server-Sent Events with "stream": true); follow-ups carry the earlier turns',
          security: keyed,
          requestBody: { required: true, content: json(chatRequest) },
          responses: {
            200: { description: 'the answer', content: { ...json(chatResponse), ...sse('events citations, token…, done (the JSON answer) or error') } },
            ...dataErrors,
          },
        },
      },
      '/v1/chat/completions': {
        post: {
          summary: 'OpenAI-compatible chat: the last user message is the question (model "rag")',
          security: keyed,
          requestBody: { required: true, content: json(chatCompletionRequest.extend({ filter: queryRequest.shape.filter, max_per_source: queryRequest.shape.max_per_source, freshness: queryRequest.shape.freshness })) },
          responses: {
            200: { description: 'a chat.completion, or chat.completion.chunk events ending with data: [DONE]', content: { ...json(chatCompletion), ...sse(JSON.stringify(jsonSchema(chatCompletionChunk))) } },
            ...v1Errors,
          },
        },
      },
      '/v1/models': {
        get: { summary: 'The one model, rag', security: keyed, responses: { 200: { description: 'model list', content: json(modelList) }, ...v1Errors } },
      },
      '/mcp': {
        post: {
          summary: 'MCP over streamable HTTP, stateless (tools search, ask, list_sources, get_passage)',
          security: keyed,
          requestBody: { required: true, content: json(jsonRpcMessage) },
          responses: { 200: { description: 'the JSON-RPC response', content: json(jsonRpcMessage) }, 202: { description: 'a notification, accepted' }, ...dataErrors },
        },
      },
      '/documents/{source}': {
        get: {
          summary: 'The original of a cited document (its source URL-encoded), under the same access as its passages; a gs:// source redirects to a signed URL, or gives it as JSON to a request that accepts application/json',
          security: keyed,
          parameters: [{ name: 'source', in: 'path', required: true, schema: { type: 'string' }, description: 'e.g. docs%2Fapi.md' }],
          responses: {
            200: { description: 'the file; for a gs:// source asked with Accept: application/json, its signed URL', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } }, ...json(documentLinkResponse) } },
            206: { description: 'folder source: the one byte range asked for (Range: bytes=…), with Content-Range', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
            302: { description: 'gs:// source: a V4 signed URL valid 5 minutes, in Location' },
            409: { description: 'RAG_DOCUMENT_CHANGED: folder source: the file is not the indexed version (mtime and size), or changed between its open and its sending', content: json(errorResponse) },
            414: { description: 'RAG_DOCUMENT_NAME_TOO_LONG: the name is over 4,096 characters once decoded', content: json(errorResponse) },
            416: { description: 'folder source: no byte of the range asked for exists; Content-Range: bytes */length' },
            ...dataErrors,
          },
        },
      },
      '/healthz': { get: { summary: 'Liveness', responses: { 200: { description: 'the process answers', content: json(healthResponse) } } } },
      '/readyz': {
        get: {
          summary: 'Readiness: can this pod serve /search?',
          responses: { 200: { description: 'ready or degraded', content: json(readyResponse) }, 503: { description: 'not ready, or draining', content: json(errorResponse) } },
        },
      },
      '/metrics': { get: { summary: 'Prometheus exposition', responses: { 200: { description: 'metrics', content: { 'text/plain': { schema: { type: 'string' } } } } } } },
      '/openapi.json': { get: { summary: 'This document', responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } } } },
      '/': { get: { summary: 'The web page', responses: { 200: { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } } } } },
      '/vendor/purify.js': { get: { summary: 'DOMPurify, for the web page', responses: { 200: { description: 'JavaScript', content: { 'text/javascript': { schema: { type: 'string' } } } } } } },
      '/vendor/marked.js': { get: { summary: 'marked, for the web page', responses: { 200: { description: 'JavaScript', content: { 'text/javascript': { schema: { type: 'string' } } } } } } },
      '/app.js': { get: { summary: 'The web page\'s script', responses: { 200: { description: 'JavaScript', content: { 'text/javascript': { schema: { type: 'string' } } } } } } },
    },
  };
}

export function registerOpenApiRoute(app: FastifyInstance): void {
  const document = openApiDocument();
  app.get('/openapi.json', async () => document);
}
