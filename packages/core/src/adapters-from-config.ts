import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { OpenAiGatewayChatModel } from './chat/openai-gateway.ts';
import type { ChatModel } from './chat/chat-model.ts';
import { StructuredOutput } from './chat/structured-output.ts';
import type { Config } from './config.ts';
import { LeadContexts, type ChunkContexts } from './context/chunk-contexts.ts';
import { ContextCache } from './context/context-cache.ts';
import { LlmContexts } from './context/llm-contexts.ts';
import { RagError } from './errors.ts';
import type { Embedder } from './embedders/embedder.ts';
import { TeiEmbedder } from './embedders/tei.ts';
import { loadOptionalModule } from './load-optional-module.ts';
import type { Logger } from './logger.ts';
import type { Reranker } from './rerankers/reranker.ts';
import { TeiReranker } from './rerankers/tei.ts';
import { QdrantStore } from './stores/qdrant.ts';
import type { VectorStore } from './stores/vector-store.ts';

/**
 * The one place where configuration picks adapters: a service URL wins, then a local model, then none.
 * The embedded adapters (LanceDB, ONNX Runtime, transformers.js) are imported only when chosen, so a
 * service on Qdrant, TEI and the gateway never loads them: they hold ~180 MiB that it would not use.
 */

export async function createStore(config: Config): Promise<VectorStore> {
  if (config.QDRANT_URL) {
    return new QdrantStore({
      url: config.QDRANT_URL,
      apiKey: config.QDRANT_API_KEY,
      collection: config.collection,
      timeoutMs: config.STORE_TIMEOUT_MS,
      bm25Language: config.BM25_LANGUAGE,
      distribution: { shardNumber: config.QDRANT_SHARD_NUMBER, replicationFactor: config.QDRANT_REPLICATION_FACTOR, writeConsistencyFactor: config.QDRANT_WRITE_CONSISTENCY_FACTOR },
      vectorStorage: { quantization: config.QDRANT_QUANTIZATION, onDisk: config.QDRANT_VECTORS_ON_DISK === undefined ? undefined : config.QDRANT_VECTORS_ON_DISK === 'true' },
    });
  }
  const { LanceDbStore } = await loadOptionalModule(() => import('./stores/lancedb.ts'), 'the embedded store (unset QDRANT_URL)');
  return new LanceDbStore({ dataDir: resolve(config.RAG_DATA_DIR), collection: config.collection, bm25Language: config.BM25_LANGUAGE, annMinRows: config.EMBEDDED_ANN_MIN_ROWS });
}

export async function createEmbedder(config: Config, logger: Logger): Promise<Embedder | undefined> {
  const prefixes = { queryPrefix: config.EMBED_QUERY_PREFIX, passagePrefix: config.EMBED_PASSAGE_PREFIX };
  if (config.EMBED_URL) {
    return new TeiEmbedder({
      url: config.EMBED_URL,
      apiKey: config.EMBED_API_KEY,
      model: config.EMBED_MODEL,
      batchSize: config.EMBED_BATCH_SIZE,
      timeoutMs: config.EMBED_TIMEOUT_MS,
      ...prefixes,
    });
  }
  if (config.EMBED_MODEL && isModel2VecFolder(config.EMBED_MODEL)) {
    const { Model2VecEmbedder } = await loadOptionalModule(() => import('./embedders/model2vec.ts'), 'a local Model2Vec embedder (EMBED_MODEL)');
    return new Model2VecEmbedder({ model: config.EMBED_MODEL });
  }
  if (config.EMBED_MODEL) {
    const { LocalOnnxEmbedder } = await loadOptionalModule(() => import('./embedders/local-onnx.ts'), 'a local ONNX embedder (EMBED_MODEL without EMBED_URL)');
    return new LocalOnnxEmbedder({ model: config.EMBED_MODEL, cacheDir: join(resolve(config.RAG_DATA_DIR), 'models'), batchSize: config.EMBED_BATCH_SIZE, ...prefixes });
  }
  logger.warn(
    'No embedding model configured: search is sparse only (BM25). Set EMBED_MODEL to a Hugging Face ONNX model id (e.g. Xenova/bge-small-en-v1.5) or a local model folder, or EMBED_URL to a TEI server, to add dense search.',
  );
  return undefined;
}

export async function createReranker(config: Config): Promise<Reranker | undefined> {
  if (config.RERANK_URL) {
    return new TeiReranker({ url: config.RERANK_URL, apiKey: config.RERANK_API_KEY ?? config.EMBED_API_KEY, model: config.RERANK_MODEL, timeoutMs: config.RERANK_TIMEOUT_MS });
  }
  if (config.RERANK_MODEL) {
    const { LocalCrossEncoderReranker } = await loadOptionalModule(
      () => import('./rerankers/local-cross-encoder.ts'),
      'a local cross-encoder (RERANK_MODEL without RERANK_URL)',
    );
    return new LocalCrossEncoderReranker({ model: config.RERANK_MODEL, cacheDir: join(resolve(config.RAG_DATA_DIR), 'models') });
  }
  return undefined;
}

export function createChatModel(config: Config): ChatModel | undefined {
  if (!config.GATEWAY_URL) return undefined;
  return new OpenAiGatewayChatModel({ url: config.GATEWAY_URL, apiKey: config.GATEWAY_API_KEY, model: config.GATEWAY_MODEL, timeoutMs: config.GATEWAY_TIMEOUT_MS });
}

/** GATEWAY_STRUCTURED for the gateway's model; undefined without a gateway. */
export function createStructuredOutput(config: Config, chatModel: ChatModel | undefined, logger?: Pick<Logger, 'info' | 'warn'>): StructuredOutput | undefined {
  return chatModel ? new StructuredOutput(config.GATEWAY_STRUCTURED, chatModel, logger) : undefined;
}

/** A Model2Vec static model is a folder with model.safetensors and no ONNX graph. */
function isModel2VecFolder(model: string): boolean {
  return existsSync(join(model, 'model.safetensors')) && !existsSync(join(model, 'onnx'));
}

/**
 * CONTEXT_MODE: undefined for off, else what writes each chunk's context. llm asks the gateway
 * (CONTEXT_MODEL, default GATEWAY_MODEL) and caches contexts in RAG_DATA_DIR/context-cache.jsonl.
 */
export async function createChunkContexts(config: Config, logger: Logger): Promise<ChunkContexts | undefined> {
  if (config.CONTEXT_MODE === 'off') return undefined;
  if (config.CONTEXT_MODE === 'lead') return new LeadContexts();
  if (!config.GATEWAY_URL) throw new RagError('RAG_CONFIG_INVALID', 'CONTEXT_MODE=llm needs GATEWAY_URL: the gateway writes the chunk contexts.');
  const chatModel = new OpenAiGatewayChatModel({
    url: config.GATEWAY_URL,
    apiKey: config.GATEWAY_API_KEY,
    model: config.CONTEXT_MODEL ?? config.GATEWAY_MODEL,
    timeoutMs: config.GATEWAY_TIMEOUT_MS,
    temperature: 0,
  });
  return new LlmContexts({
    chatModel,
    cache: await ContextCache.open(join(resolve(config.RAG_DATA_DIR), 'context-cache.jsonl')),
    logger,
    concurrency: config.CONTEXT_CONCURRENCY,
    maxTokens: config.CONTEXT_MAX_TOKENS,
    maxDocumentChars: config.CONTEXT_MAX_DOCUMENT_CHARS,
  });
}
