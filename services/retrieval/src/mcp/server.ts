/**
 * `pnpm mcp` / `node dist/mcp/server.js`: the MCP tools over stdio, for desktop clients that start the
 * server themselves. Reads the same variables as the API (RAG_DATA_DIR, QDRANT_URL, EMBED_*, GATEWAY_*…)
 * and wires the same adapters; stdout carries the protocol only, logs go to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  Answerer,
  createChatModel,
  createStructuredOutput,
  createEmbedder,
  createReranker,
  createStore,
  fusionOf,
  PassageReader,
  PUBLIC_ONLY,
  Retriever,
  Telemetry,
  type Config,
  type Logger,
} from '@rag/core';
import { StoreGate } from '../store-gate.ts';
import type { FastifyBaseLogger } from 'fastify';
import { createMcpServer } from './tools.ts';
import { runEntryPoint } from '../run-entry-point.ts';

async function main(config: Config, logger: Logger): Promise<void> {
  const telemetry = new Telemetry();
  const store = await createStore(config);
  const embedder = await createEmbedder(config, logger);
  const reranker = await createReranker(config);
  const chatModel = createChatModel(config);
  const structuredOutput = createStructuredOutput(config, chatModel, logger);
  // Opened on the first tool call that needs it, and retried by the next one while Qdrant or TEI is down.
  const storeGate = new StoreGate(store, embedder);
  const retriever = new Retriever({ store, embedder, reranker, rerankCandidates: config.RERANK_CANDIDATES, rerankFallback: config.RERANK_FALLBACK, telemetry, logger, fusion: fusionOf(config) });
  const answerer = new Answerer({ retriever, chatModel, minScore: config.RAG_MIN_SCORE, condenseTimeoutMs: config.CONDENSE_TIMEOUT_MS, unsupportedClaims: config.UNSUPPORTED_CLAIMS, suspectPassages: config.SUSPECT_PASSAGES, followUpSearch: config.FOLLOW_UP_SEARCH, structuredOutput, promptPassageChars: config.PROMPT_PASSAGE_CHARS, telemetry, logger });
  // A local process with no API key: public documents only, as the API without RAG_AUTH_FILE.
  const server = createMcpServer({ retriever, answerer, passages: new PassageReader(store), storeGate, defaultK: config.TOP_K, visibleGroups: PUBLIC_ONLY, logger: logger as FastifyBaseLogger });
  const transport = new StdioServerTransport();
  transport.onclose = () => {
    void Promise.allSettled([store.close(), telemetry.shutdown()]).then(() => process.exit(0));
  };
  await server.connect(transport);
  // The client ends the server by closing stdin (MCP's stdio shutdown), or with a signal.
  process.stdin.once('end', () => void transport.close());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void transport.close());
  logger.info({ mode: answerer.mode, collection: config.collection }, 'MCP server ready on stdio');
}

runEntryPoint(main, 'MCP server failed to start');
