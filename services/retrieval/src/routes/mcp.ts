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
  app.post('/mcp', async (request, reply) => {
    const server = createMcpServer({ ...deps, visibleGroups: visibleGroupsOf(request) });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });
}
