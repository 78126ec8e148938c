import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Answerer, type ConversationTurn, chunkMarkdown, chunkOptionsOf, contextualText, createChunkContexts, NO_CONTEXT, type ChunkContexts, type ChatModel, createChatModel, createEmbedder, createStructuredOutput, createReranker, createStore, encodeDocument, fusionOf, ingest, PUBLIC_ONLY, RagError, Retriever, Telemetry, type Config, type Embedder, type IndexedChunk, type Logger, type RrfParameters, type FollowUpSearch as FollowUpSearchSetting, type SearchHit, type VectorStore } from '@rag/core';
import { createConverters, LocalDirectorySource } from '@rag/core/ingestion';
import type { ChatReply, ConversationBackend, EvalBackend, EvalPassage, FollowUpSearch } from './backend.ts';
import { CachedEmbedder } from './embedding-cache.ts';
import type { GoldenCorpus } from './golden-set.ts';

/**
 * The embedded pipeline the server would build from the same environment (store, embedder,
 * reranker, gateway), over a fresh index in a temporary RAG_DATA_DIR. QDRANT_URL is ignored: the
 * in-process eval never writes into a shared collection (use --url against a served stack for that).
 * Local models stay cached in the real RAG_DATA_DIR/models.
 */
export class EmbeddedIndex implements ConversationBackend {
  readonly description: string;
  /** Follow-ups are searched as without a gateway, whatever model answers /chat here. */
  private readonly llmFreeAnswerer: Answerer;

  private constructor(
    readonly config: Config,
    private readonly dataDir: string,
    readonly store: VectorStore,
    readonly embedder: Embedder | undefined,
    private readonly retriever: Retriever,
    private readonly answerer: Answerer,
    private readonly telemetry: Telemetry,
    private readonly logger: Logger,
    private readonly contexts: ChunkContexts | undefined,
  ) {
    const dense = embedder ? `dense ${embedder.modelId} + BM25, ${describeFusion(fusionOf(config))}` : 'sparse BM25 only (no embedder)';
    const rerank = retriever.reranks ? `, reranked (${config.RERANK_MODEL ?? config.RERANK_URL})` : ', no reranker';
    const context = contexts ? `, chunk context ${contexts.description}` : '';
    this.description = `in process, embedded ${store.name}: ${dense}${rerank}${context}`;
    this.llmFreeAnswerer = new Answerer({ retriever, minScore: config.RAG_MIN_SCORE, telemetry });
  }

  /** `embeddingCache`: a folder where passage embeddings are kept between runs (see embedding-cache.ts). */
  static async open(baseConfig: Config, logger: Logger, options: { embeddingCache?: string; chatModel?: ChatModel | undefined } = {}): Promise<EmbeddedIndex> {
    const dataDir = await mkdtemp(join(tmpdir(), 'rag-eval-'));
    const config: Config = { ...baseConfig, RAG_DATA_DIR: dataDir, QDRANT_URL: undefined };
    const telemetry = new Telemetry();
    const store = await createStore(config);
    try {
      await shareModelCache(baseConfig, dataDir);
      const modelEmbedder = await createEmbedder(config, logger);
      const embedder = modelEmbedder && options.embeddingCache ? await CachedEmbedder.open(modelEmbedder, options.embeddingCache) : modelEmbedder;
      const reranker = await createReranker(config);
      const contexts = await createChunkContexts(config, logger);
      await store.open(embedder ? await embedder.describe() : null, { context: contexts?.lock ?? NO_CONTEXT });
      // Always 'fail', whatever RERANK_FALLBACK says: a report of the reranked pipeline must not hold fused rankings.
      const retriever = new Retriever({ store, embedder, reranker, rerankCandidates: config.RERANK_CANDIDATES, rerankFallback: 'fail', telemetry, fusion: fusionOf(config) });
      const chatModel = options.chatModel ?? createChatModel(config);
      const answerer = new Answerer({ retriever, chatModel, minScore: config.RAG_MIN_SCORE, condenseTimeoutMs: config.CONDENSE_TIMEOUT_MS, unsupportedClaims: config.UNSUPPORTED_CLAIMS, suspectPassages: config.SUSPECT_PASSAGES, followUpSearch: config.FOLLOW_UP_SEARCH, structuredOutput: createStructuredOutput(config, chatModel), promptPassageChars: config.PROMPT_PASSAGE_CHARS, telemetry });
      return new EmbeddedIndex(config, dataDir, store, embedder, retriever, answerer, telemetry, logger, contexts);
    } catch (error) {
      // Nobody gets an index to close: release what was made (a model that failed to load, a bad EMBED_URL).
      await store.close();
      await telemetry.shutdown();
      await rm(dataDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Ingests a golden set's corpus folder exactly as `pnpm ingest` would. */
  async ingestFolder(corpus: GoldenCorpus): Promise<{ files: number; chunks: number }> {
    if (!existsSync(corpus.root)) throw new RagError('RAG_SOURCE_UNAVAILABLE', `The golden set's corpus folder ${corpus.root} does not exist.`);
    const summary = await ingest({
      source: new LocalDirectorySource(corpus.root, corpus.include ? { include: corpus.include } : {}),
      store: this.store,
      embedder: this.embedder,
      contexts: this.contexts,
      converters: createConverters(this.config),
      chunking: chunkOptionsOf(this.config),
      embedBatchSize: this.config.EMBED_BATCH_SIZE,
      concurrency: this.config.INGEST_CONCURRENCY,
      prune: false,
      dryRun: false,
      logger: this.logger,
    });
    if (summary.errors > 0) {
      throw new RagError('RAG_DOCUMENT_UNREADABLE', summary.failures.map((failure) => `${failure.uri}: ${failure.reason}`).join('; '));
    }
    return { files: summary.files, chunks: summary.chunks };
  }

  /**
   * Indexes in-memory Markdown documents in large batches straight through the store (same chunker
   * and vectors as ingestion, without one write per document): fast enough for a 5,000-document BEIR corpus.
   */
  async indexDocuments(documents: AsyncIterable<{ source: string; markdown: string }> | Iterable<{ source: string; markdown: string }>, batchChunks = 2000): Promise<number> {
    const chunking = chunkOptionsOf(this.config);
    const ingestedAt = new Date().toISOString();
    let pending: IndexedChunk[] = [];
    let total = 0;
    const flush = async () => {
      if (pending.length === 0) return;
      if (this.embedder) {
        const dense: number[][] = [];
        for (let start = 0; start < pending.length; start += this.config.EMBED_BATCH_SIZE) {
          const batch = pending.slice(start, start + this.config.EMBED_BATCH_SIZE);
          dense.push(...(await this.embedder.embedDocuments(batch.map((chunk) => contextualText(chunk.text, chunk.context)))));
        }
        pending.forEach((chunk, position) => (chunk.dense = dense[position]));
      }
      await this.store.upsert(pending);
      total += pending.length;
      pending = [];
    };
    for await (const document of documents) {
      const contentHash = createHash('sha256').update(document.markdown).digest('hex');
      const chunks = chunkMarkdown(document.markdown, document.source, chunking);
      const contexts = this.contexts ? (await this.contexts.contextsFor({ uri: document.source, markdown: document.markdown, contentHash }, chunks)).contexts : [];
      chunks.forEach((chunk, position) => {
        const context = contexts[position] ?? '';
        pending.push({ ...chunk, contentHash, groups: [], context, sparse: encodeDocument(contextualText(chunk.text, context), this.store.bm25Language), ingestedAt });
      });
      if (pending.length >= batchChunks) await flush();
    }
    await flush();
    return total;
  }

  /** What an anonymous /search sees: public documents only (golden-set corpora have no access rules). */
  async search(query: string, k: number): Promise<EvalPassage[]> {
    return (await this.retriever.search(query, k, PUBLIC_ONLY)).map(toPassage);
  }

  /**
   * A follow-up searched as an anonymous /chat searches it (Answerer.retrieveFor): without a gateway, or with one whose
   * model condenses it (a CPU model takes tens of seconds: the eval waits, where the service's CONDENSE_TIMEOUT_MS falls back).
   */
  async searchFollowUp(question: string, earlier: readonly ConversationTurn[], k: number, gateway?: { chatModel: ChatModel; followUpSearch: FollowUpSearchSetting }): Promise<FollowUpSearch> {
    const answerer = gateway ? new Answerer({ retriever: this.retriever, chatModel: gateway.chatModel, followUpSearch: gateway.followUpSearch, condenseTimeoutMs: 600_000, telemetry: this.telemetry }) : this.llmFreeAnswerer;
    const { search, retrieval, topic } = await answerer.retrieveFor(question, k, PUBLIC_ONLY, undefined, earlier);
    return { query: search.text, topicSources: topic?.sources ?? [], passages: retrieval.hits.map(toPassage) };
  }

  /**
   * The same index searched another way, through the product's Retriever (no reranker): sparse only (no
   * embedder, as without EMBED_MODEL), or both legs fused with these RRF parameters. Closing it closes nothing.
   */
  view(mode: { label: string; fusion: RrfParameters } | { label: string; sparseOnly: true }): EvalBackend {
    const sparseOnly = 'sparseOnly' in mode;
    const retriever = new Retriever({
      store: this.store,
      embedder: sparseOnly ? undefined : this.embedder,
      rerankCandidates: this.config.RERANK_CANDIDATES,
      telemetry: this.telemetry,
      fusion: sparseOnly ? undefined : mode.fusion,
    });
    return {
      description: `in process, embedded ${this.store.name}: ${mode.label}`,
      search: async (query, k) => (await retriever.search(query, k, PUBLIC_ONLY)).map(toPassage),
      chat: () => Promise.reject(new Error('a retrieval mode view answers no chat')),
      close: async () => undefined,
    };
  }

  async chat(query: string): Promise<ChatReply> {
    const answer = await this.answerer.answer(query, this.config.TOP_K, PUBLIC_ONLY);
    return {
      answer: answer.answer,
      citations: answer.citations.map((citation) => ({ source: citation.source, chunkIndex: citation.chunkIndex })),
      unknownCitations: answer.unknownCitations,
      mode: answer.mode,
    };
  }

  async close(): Promise<void> {
    await this.store.close();
    await this.telemetry.shutdown();
    await rm(this.dataDir, { recursive: true, force: true });
  }
}

export function toPassage(hit: SearchHit): EvalPassage {
  return { source: hit.source, headingPath: hit.headingPath, chunkIndex: hit.chunkIndex, text: hit.text, score: hit.score };
}

/** `RRF (k 2)` or `RRF (k 10, weights dense 2, sparse 1)`, for report lines. */
export function describeFusion(fusion: RrfParameters): string {
  const { dense, sparse } = fusion.weights;
  return dense === 1 && sparse === 1 ? `RRF (k ${fusion.k})` : `RRF (k ${fusion.k}, weights dense ${dense}, sparse ${sparse})`;
}

/** Points the temporary data folder's model cache at the real one, so local models download once. */
async function shareModelCache(config: Config, dataDir: string): Promise<void> {
  const cache = join(resolve(config.RAG_DATA_DIR), 'models');
  const usesLocalModel = (config.EMBED_MODEL && !config.EMBED_URL) || (config.RERANK_MODEL && !config.RERANK_URL);
  if (usesLocalModel) await mkdir(cache, { recursive: true });
  if (existsSync(cache)) await symlink(cache, join(dataDir, 'models'), 'dir');
}
