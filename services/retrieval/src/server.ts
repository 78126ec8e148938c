import type { AddressInfo } from 'node:net';
import {
  Answerer,
  createChatModel,
  createStructuredOutput,
  createDocumentOrigin,
  createEmbedder,
  createReranker,
  createStore,
  fusionOf,
  isRagError,
  parseIncomingTraceTrust,
  PassageReader,
  Retriever,
  startTracing,
  Telemetry,
  type Config,
  type Logger,
} from '@rag/core';
import { buildApp } from './app.ts';
import { loadApiKeys, type ApiKeys } from './auth/api-keys.ts';
import { GracefulShutdown } from './graceful-shutdown.ts';
import { EmbedActivity } from './embed-activity.ts';
import { withPinnedCollection } from './pinned-collection.ts';
import { readinessChecks, readinessDetails } from './readiness-checks.ts';
import { StoreGate } from './store-gate.ts';
import { runEntryPoint } from './run-entry-point.ts';

/**
 * Wires the adapters chosen by the environment and serves the API. A dependency that is down at start
 * does not stop the process: the store is opened on the first request that finds it back.
 */
async function main(config: Config, logger: Logger): Promise<void> {
  const apiKeys = await apiKeysOf(config, logger);
  // Off (no-op API, nothing created) unless OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set.
  const tracing = startTracing(config, { serviceName: 'rag-retrieval' });
  const telemetry = new Telemetry();
  const store = await createStore(await withPinnedCollection(config, logger));
  // Successful query embeddings keep /readyz's embed check ready while TEI is slow (embed-activity.ts).
  const embedActivity = new EmbedActivity();
  const configuredEmbedder = await createEmbedder(config, logger);
  const embedder = configuredEmbedder && embedActivity.track(configuredEmbedder);
  const reranker = await createReranker(config);
  const chatModel = createChatModel(config);
  const structuredOutput = createStructuredOutput(config, chatModel, logger);
  structuredOutput?.start();
  const storeGate = new StoreGate(store, embedder);
  const opened = await openAtStartup(storeGate, logger);
  const retriever = new Retriever({ store, embedder, reranker, rerankCandidates: config.RERANK_CANDIDATES, rerankFallback: config.RERANK_FALLBACK, telemetry, logger, fusion: fusionOf(config) });
  const answerer = new Answerer({ retriever, chatModel, minScore: config.RAG_MIN_SCORE, condenseTimeoutMs: config.CONDENSE_TIMEOUT_MS, unsupportedClaims: config.UNSUPPORTED_CLAIMS, suspectPassages: config.SUSPECT_PASSAGES, followUpSearch: config.FOLLOW_UP_SEARCH, structuredOutput, promptPassageChars: config.PROMPT_PASSAGE_CHARS, telemetry, logger });
  const checks = readinessChecks({ gate: storeGate, store, embedder, embedActivity, reranker, chatModel });
  const shutdown = new GracefulShutdown({
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    logger,
    closeResources: async () => {
      await store.close();
      await telemetry.shutdown();
      await tracing.shutdown();
    },
  });
  const app = buildApp({
    retriever,
    answerer,
    passages: new PassageReader(store),
    telemetry,
    readinessChecks: checks,
    storeGate,
    defaultK: config.TOP_K,
    logger,
    isDraining: shutdown.isDraining,
    readinessDetails: readinessDetails(structuredOutput),
    apiKeys,
    documents: await createDocumentOrigin(config),
    traceTrust: parseIncomingTraceTrust(config.TRACE_TRUST_INCOMING),
    addressRateLimit: apiKeys ? undefined : { perMinute: config.RAG_RATE_LIMIT_PER_ADDRESS },
  });
  shutdown.attach(app);
  await app.listen({ port: config.PORT, host: config.HOST });
  // The port actually bound: PORT=0 asks the system for a free one.
  const { port } = app.server.address() as AddressInfo;
  const chunks = opened ? await store.count().catch(() => undefined) : undefined;
  printWelcome(config, port, chunks, chatModel ? 'llm' : 'extractive');
}

/** RAG_AUTH_FILE's keys, or undefined (open API): a bad file stops the start with RAG_CONFIG_INVALID. */
async function apiKeysOf(config: Config, logger: Logger): Promise<ApiKeys | undefined> {
  if (config.RAG_AUTH_FILE) {
    const apiKeys = await loadApiKeys(config.RAG_AUTH_FILE);
    logger.info({ keys: apiKeys.size }, `API keys loaded from ${config.RAG_AUTH_FILE}: /search and /chat need Authorization: Bearer <key>`);
    return apiKeys;
  }
  if (!isLoopback(config.HOST)) {
    logger.warn(
      { host: config.HOST, rateLimitPerAddress: config.RAG_RATE_LIMIT_PER_ADDRESS },
      `RAG_AUTH_FILE is not set and HOST=${config.HOST} is reachable from other machines: anyone who reaches the port can search and chat, and sees public documents only. ${addressLimitText(config)} Set RAG_AUTH_FILE to require API keys with per-key limits (README, "Access").`,
    );
  }
  return undefined;
}

/** The open API's only brake, as the start warning and the banner say it. */
function addressLimitText(config: Config): string {
  const limit = config.RAG_RATE_LIMIT_PER_ADDRESS;
  return limit > 0 ? `Rate limit: ${limit} requests a minute per client address (RAG_RATE_LIMIT_PER_ADDRESS).` : 'NO rate limit at all (RAG_RATE_LIMIT_PER_ADDRESS=0).';
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * One attempt to open the store before listening. A wrong embedding model is not transient, so it stops
 * the process (RAG_MODEL_MISMATCH, exit 1); anything else is logged and retried by the requests.
 */
async function openAtStartup(gate: StoreGate, logger: Logger): Promise<boolean> {
  try {
    await gate.ready();
    return true;
  } catch (error) {
    if (isRagError(error) && error.code === 'RAG_MODEL_MISMATCH') throw error;
    const code = isRagError(error) ? error.code : 'RAG_INTERNAL';
    logger.warn(
      { code, dependency: dependencyOf(code), reason: (error as Error).message },
      `The ${dependencyOf(code)} is not available at startup; serving anyway: /search and /chat answer 503 and retry until it is back.`,
    );
    return false;
  }
}

/** The dependency an error code names, for the startup warning. */
function dependencyOf(code: string): string {
  if (code.startsWith('RAG_EMBED_')) return 'embedding server (EMBED_URL)';
  if (code.startsWith('RAG_STORE_')) return 'vector store (QDRANT_URL)';
  return 'store or embedder';
}

function printWelcome(config: Config, port: number, chunks: number | undefined, mode: string): void {
  const url = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;
  const indexed = chunks === undefined ? `store not reachable yet` : `${chunks} chunks`;
  const auth = config.RAG_AUTH_FILE ? ` -H 'authorization: Bearer YOUR_KEY'` : '';
  process.stdout.write(
    [
      `RAG retrieval API listening on ${url} (${indexed} in "${config.collection}", /chat mode: ${mode})`,
      `Open ${url}/ in a browser`,
      `Try:`,
      `  curl -s ${url}/search${auth} -H 'content-type: application/json' -d '{"query":"how is the sparse vector built?"}'`,
      `  curl -s ${url}/chat${auth} -H 'content-type: application/json' -d '{"query":"what happens when I change the embedding model?"}'`,
      ...(config.RAG_AUTH_FILE ? [] : [`No API keys (RAG_AUTH_FILE unset): the API is open${isLoopback(config.HOST) ? '' : ` to every machine that reaches ${config.HOST}:${port}`}, public documents only. ${addressLimitText(config)}`]),
      ...(chunks === 0 ? ['The index is empty: index a folder first with `pnpm ingest ./your-docs` (or run `pnpm start` for this project\'s docs).'] : []),
      '',
    ].join('\n'),
  );
}

runEntryPoint(main, 'startup failed');
