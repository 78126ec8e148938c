import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Answerer, PassageReader, Retriever } from '@rag/core';
import type { FastifyInstance } from 'fastify';
import { createMcpServer } from '../mcp/tools.ts';
import type { OpenGate } from '../store-gate.ts';
import { visibleGroupsOf } from './search.ts';

export interface McpRouteDependencies {
  retriever: Retriever;
  answerer: Answerer;
  passages: PassageReader;
  storeGate?: OpenGate | undefined;
  defaultK: number;
}

/**
 * MCP over streamable HTTP (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports),
 * stateless: each POST gets its own server, bound to the caller's key and groups, and a plain JSON answer.
 * No session outlives its request, so any replica can answer, the auth hook sees every message, and a
 * drain waits for the POSTs in flight only. GET (a server-initiated stream) is not offered: 405.
 */
export function registerMcpRoute(app: FastifyInstance, deps: McpRouteDependencies): void {
  app.post('/mcp', { config: { rateLimitCost: jsonRpcMessageCount } }, async (request, reply) => {
    const server = createMcpServer({ ...deps, visibleGroups: visibleGroupsOf(request), logger: request.log });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // Closing the transport aborts the `extra.signal` of every tool call still running, so a client that
    // goes away stops its embedding, store and gateway calls too.
    reply.raw.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The transport writes the raw response: headers set by the hooks (X-RateLimit-*) go with it.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });
}

/**
 * What a POST costs against its key's rate limit: one unit per JSON-RPC message. Protocol revision
 * 2025-03-26 let a POST carry a batch (an array, up to 100 messages in SDK 1.32); 2025-06-18 removed
 * batching (https://modelcontextprotocol.io/specification/2025-06-18/changelog), but the SDK still accepts
 * batches from older clients, and a batch must not buy many tool calls for the price of one request.
 */
export function jsonRpcMessageCount(body: unknown): number {
  return Array.isArray(body) ? Math.max(1, body.length) : 1;
}
