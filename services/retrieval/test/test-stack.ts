import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Answerer, createLogger, ingest, PassageReader, Retriever, Telemetry, type ChatModel, type DocumentOrigin, type Embedder, type IngestSummary, type Logger, type Reranker, type FollowUpSearch, type StructuredOutput, type SuspectPassages, type UnsupportedClaims, type VectorStore } from '@rag/core';
import { ConverterRegistry, LocalDirectorySource, MarkdownPassthrough, type Converter } from '@rag/core/ingestion';
import { LanceDbStore } from '@rag/core/embedded';
import type { FastifyInstance } from 'fastify';
import { buildApp, type HttpTimeouts } from '../src/app.ts';
import { readinessDetails } from '../src/readiness-checks.ts';
import type { AddressRateLimit } from '../src/auth/auth-plugin.ts';
import type { ApiKeys } from '../src/auth/api-keys.ts';
import { httpDispatcher } from '../../../packages/core/src/http/http-dispatcher.ts';

export const handbookFolder = new URL('./fixtures/handbook/', import.meta.url).pathname;

/**
 * The real ingestion pipeline over a folder of Markdown, at the seed's chunk boundaries (CHUNK_MIN_CHARS=0): the fixtures'
 * tests name chunks by number, one per small section.
 */
export function ingestFolder(folder: string, store: VectorStore, embedder: Embedder | undefined, logger: Logger, extraConverters: Converter[] = []): Promise<IngestSummary> {
  return ingest({
    source: new LocalDirectorySource(folder),
    store,
    embedder,
    converters: new ConverterRegistry([new MarkdownPassthrough(), ...extraConverters]),
    chunking: { chunkSize: 1200, chunkOverlap: 200 },
    embedBatchSize: 8,
    concurrency: 2,
    prune: true,
    dryRun: false,
    logger,
  });
}

export interface TestStack {
  app: FastifyInstance;
  baseUrl: string;
  store: LanceDbStore;
  ingestSummary: IngestSummary;
  close(): Promise<void>;
}

/** The whole embedded pipeline: a real LanceDB in a temporary folder, the real app on port 0. */
export async function startTestStack(options: {
  folder?: string;
  embedder?: Embedder;
  reranker?: Reranker;
  chatModel?: ChatModel;
  minScore?: number;
  /** Data routes then need a key (RAG_AUTH_FILE). */
  apiKeys?: ApiKeys;
  /** Without apiKeys: RAG_RATE_LIMIT_PER_ADDRESS; default none, so tests that fire many requests are not throttled. */
  addressRateLimit?: AddressRateLimit;
  /** The app's logger; default silent. */
  logger?: Logger;
  /** Shorter request deadlines than the production ones. */
  httpTimeouts?: Partial<HttpTimeouts>;
  /** Where GET /documents finds originals. */
  documents?: DocumentOrigin;
  /** Converters besides Markdown's (e.g. PdfConverter, for paged documents). */
  converters?: Converter[];
  /** UNSUPPORTED_CLAIMS; default mark. */
  unsupportedClaims?: UnsupportedClaims;
  /** GATEWAY_STRUCTURED's decision for chatModel; /readyz reports it as server.ts does. */
  structuredOutput?: StructuredOutput;
  /** PROMPT_PASSAGE_CHARS; default whole passages. */
  promptPassageChars?: number;
  /** SUSPECT_PASSAGES; default withhold. */
  suspectPassages?: SuspectPassages;
  /** FOLLOW_UP_SEARCH; default fused. */
  followUpSearch?: FollowUpSearch;
} = {}): Promise<TestStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'rag-test-'));
  const logger = options.logger ?? createLogger('silent');
  const telemetry = new Telemetry();
  const store = new LanceDbStore({ dataDir, collection: 'test' });
  await store.open(options.embedder ? await options.embedder.describe() : null);
  const ingestSummary = await ingestFolder(options.folder ?? handbookFolder, store, options.embedder, logger, options.converters);
  const retriever = new Retriever({ store, embedder: options.embedder, reranker: options.reranker, rerankCandidates: 50, telemetry });
  const answerer = new Answerer({ retriever, chatModel: options.chatModel, minScore: options.minScore, unsupportedClaims: options.unsupportedClaims, structuredOutput: options.structuredOutput, promptPassageChars: options.promptPassageChars, suspectPassages: options.suspectPassages, followUpSearch: options.followUpSearch, telemetry });
  const app = buildApp({
    retriever,
    answerer,
    passages: new PassageReader(store),
    telemetry,
    readinessChecks: [{ name: 'store', check: () => store.checkReady() }],
    defaultK: 5,
    logger,
    apiKeys: options.apiKeys,
    addressRateLimit: options.addressRateLimit,
    httpTimeouts: options.httpTimeouts,
    documents: options.documents,
    readinessDetails: readinessDetails(options.structuredOutput),
  });
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    app,
    baseUrl,
    store,
    ingestSummary,
    async close() {
      await app.close();
      await store.close();
      await telemetry.shutdown();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * POST as a client would, through the suite's own connection pool (http-dispatcher.ts): Node 26.6's bundled undici
 * stalls a kept-alive request after an idle second, which the tests that time answers would take for the server's.
 */
export async function postJson(baseUrl: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    dispatcher: httpDispatcher,
  });
  return { status: response.status, headers: response.headers, body: await readJson(response) };
}

/** Response bodies are checked field by field in the tests; `any` keeps those checks short. */
export async function readJson(response: Response): Promise<any> {
  return response.json();
}
