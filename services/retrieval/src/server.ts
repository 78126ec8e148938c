import {
  Answerer,
  createChatModel,
  createEmbedder,
  createLogger,
  createReranker,
  createStore,
  isRagError,
  loadConfig,
  Retriever,
  Telemetry,
  type Config,
  type Logger,
} from '@rag/core';
import { buildApp } from './app.ts';
import type { ReadinessCheck } from './routes/health.ts';

/** Wires the adapters chosen by the environment, opens the store and serves the API. */
async function main(config: Config, logger: Logger): Promise<void> {
  const telemetry = new Telemetry();
  const store = createStore(config);
  const embedder = createEmbedder(config, logger);
  const reranker = createReranker(config);
  const chatModel = createChatModel(config);
  await store.open(embedder ? await embedder.describe() : null);
  const retriever = new Retriever({ store, embedder, reranker, rerankCandidates: config.RERANK_CANDIDATES, telemetry });
  const answerer = new Answerer({ retriever, chatModel, minScore: config.RAG_MIN_SCORE, telemetry });
  const readinessChecks: ReadinessCheck[] = [{ name: 'store', check: (signal) => store.checkReady(signal) }];
  if (chatModel?.checkReady) readinessChecks.push({ name: 'gateway', check: (signal) => chatModel.checkReady!(signal) });
  const app = buildApp({ retriever, answerer, telemetry, readinessChecks, defaultK: config.TOP_K, logger });
  const closeAll = async () => {
    await app.close();
    await store.close();
    await telemetry.shutdown();
  };
  process.once('SIGINT', () => void closeAll().then(() => process.exit(0)));
  process.once('SIGTERM', () => void closeAll().then(() => process.exit(0)));
  await app.listen({ port: config.PORT, host: config.HOST });
  printWelcome(config, (await store.count()) ?? 0, chatModel ? 'llm' : 'extractive');
}

function printWelcome(config: Config, chunks: number, mode: string): void {
  const url = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${config.PORT}`;
  process.stdout.write(
    [
      `RAG retrieval API listening on ${url} (${chunks} chunks in "${config.collection}", /chat mode: ${mode})`,
      `Try:`,
      `  curl -s ${url}/search -H 'content-type: application/json' -d '{"query":"how is the sparse vector built?"}'`,
      `  curl -s ${url}/chat -H 'content-type: application/json' -d '{"query":"what happens when I change the embedding model?"}'`,
      '',
    ].join('\n'),
  );
}

const config = (() => {
  try {
    return loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
})();
const logger = createLogger(config.LOG_LEVEL);
main(config, logger).catch((error: unknown) => {
  if (isRagError(error)) logger.fatal({ code: error.code, cause: error.cause }, error.message);
  else logger.fatal({ err: error }, 'startup failed');
  process.exit(1);
});
