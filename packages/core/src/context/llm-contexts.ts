import pLimit, { type LimitFunction } from 'p-limit';
import type { ChatModel } from '../chat/chat-model.ts';
import type { Chunk, ContextLock } from '../domain.ts';
import { isRagError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { emptyDocumentContexts, type ChunkContexts, type ContextDocument, type DocumentContexts } from './chunk-contexts.ts';
import { contextCacheKey, type ContextCache } from './context-cache.ts';
import { cleanContext, contextMessages, CONTEXT_PROMPT_VERSION } from './llm-context-prompt.ts';

export interface LlmContextsOptions {
  chatModel: ChatModel;
  cache: ContextCache;
  logger: Logger;
  /** Chunks being written at once, across every document of the run (CONTEXT_CONCURRENCY). */
  concurrency: number;
  /** Tokens the run may spend (CONTEXT_MAX_TOKENS); calls in flight when it is reached still finish. */
  maxTokens: number;
  /** CONTEXT_MAX_DOCUMENT_CHARS: a longer document is sent as a window around the chunk. */
  maxDocumentChars: number;
}

/**
 * CONTEXT_MODE=llm: the gateway writes each chunk's context from its document. A cached context costs
 * nothing; a failed call leaves the chunk without context (the run counts it as an error and the next
 * run asks again, the rest of the document coming from the cache).
 */
export class LlmContexts implements ChunkContexts {
  readonly lock: ContextLock = { mode: 'llm', promptVersion: CONTEXT_PROMPT_VERSION };
  readonly description: string;
  private readonly limit: LimitFunction;
  private tokensSpent = 0;

  constructor(private readonly options: LlmContextsOptions) {
    this.limit = pLimit(options.concurrency);
    this.description = `llm (${CONTEXT_PROMPT_VERSION}, ${options.chatModel.modelId})`;
  }

  async contextsFor(document: ContextDocument, chunks: readonly Chunk[], signal?: AbortSignal): Promise<DocumentContexts> {
    const result = emptyDocumentContexts(chunks.map(() => ''));
    await Promise.all(
      chunks.map((chunk, position) =>
        this.limit(async () => {
          result.contexts[position] = await this.contextOf(document, chunk, result, signal);
        }),
      ),
    );
    return result;
  }

  async forget(sources: readonly string[]): Promise<void> {
    await this.options.cache.forget(sources);
  }

  private async contextOf(document: ContextDocument, chunk: Chunk, result: DocumentContexts, signal: AbortSignal | undefined): Promise<string> {
    const { chatModel, cache, logger } = this.options;
    const key = contextCacheKey({ documentHash: document.contentHash, chunkText: chunk.text, model: chatModel.modelId, promptVersion: CONTEXT_PROMPT_VERSION });
    const owner = { source: document.uri, groups: document.groups ?? [] };
    const cached = cache.get(key, owner);
    if (cached !== undefined) {
      result.cached += 1;
      return cached;
    }
    signal?.throwIfAborted();
    if (this.tokensSpent >= this.options.maxTokens) {
      result.deferred += 1;
      return '';
    }
    try {
      const completion = await chatModel.complete(contextMessages(document.markdown, chunk.text, this.options.maxDocumentChars), signal);
      const promptTokens = completion.usage?.promptTokens ?? 0;
      const completionTokens = completion.usage?.completionTokens ?? 0;
      this.tokensSpent += promptTokens + completionTokens;
      result.promptTokens += promptTokens;
      result.completionTokens += completionTokens;
      const context = cleanContext(completion.content);
      await cache.put(key, context, owner);
      result.written += 1;
      return context;
    } catch (error) {
      if (signal?.aborted) throw error;
      result.failed += 1;
      const code = isRagError(error) ? error.code : 'RAG_INTERNAL';
      logger.warn({ uri: document.uri, chunkIndex: chunk.chunkIndex, code, reason: error instanceof Error ? error.message : String(error) }, 'chunk context failed: indexed without it, retried next run');
      return '';
    }
  }
}
