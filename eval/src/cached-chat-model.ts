import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChatCompletion, ChatMessage, ChatModel, ChatStreamEvent, CompletionOptions } from '@rag/core';

/**
 * Completions kept on disk between eval runs: a 1.5B model on two shared cores takes about a minute an
 * answer, and a report is rewritten far more often than its answers change. One JSON line per completion in
 * <directory>/<model>.jsonl, keyed by the SHA-256 of the model id, the options and the messages, the
 * prompt's random fence value (prompt.ts) replaced by a constant so that the same question over the same
 * passages is the same key. The server decodes greedily (llm:serve --temp 0), so a cached answer is the
 * one the model would give again, up to that fence value.
 */
const FENCE_VALUE = /\b[0-9a-f]{24}\b/g;

export class CachedChatModel implements ChatModel {
  readonly counts = { cached: 0, asked: 0 };
  private answers = new Map<string, ChatCompletion>();
  private file = '';

  private constructor(private readonly inner: ChatModel) {}

  get modelId(): string {
    return this.inner.modelId;
  }

  static async open(inner: ChatModel, directory: string): Promise<CachedChatModel> {
    const cached = new CachedChatModel(inner);
    await mkdir(directory, { recursive: true });
    cached.file = join(directory, `${inner.modelId.replace(/[^\w.-]+/g, '_')}.jsonl`);
    if (existsSync(cached.file)) {
      for (const line of (await readFile(cached.file, 'utf8')).split('\n')) {
        if (line.trim() === '') continue;
        const { key, completion } = JSON.parse(line) as { key: string; completion: ChatCompletion };
        cached.answers.set(key, completion);
      }
    }
    return cached;
  }

  private key(messages: ChatMessage[], options: CompletionOptions | undefined): string {
    const normalised = messages.map(({ role, content }) => ({ role, content: content.replace(FENCE_VALUE, 'FENCE') }));
    return createHash('sha256').update(JSON.stringify([this.inner.modelId, options ?? {}, normalised])).digest('hex');
  }

  async complete(messages: ChatMessage[], signal?: AbortSignal, options?: CompletionOptions): Promise<ChatCompletion> {
    const key = this.key(messages, options);
    const known = this.answers.get(key);
    if (known) {
      this.counts.cached += 1;
      return known;
    }
    const completion = await this.inner.complete(messages, signal, options);
    this.counts.asked += 1;
    this.answers.set(key, completion);
    await appendFile(this.file, `${JSON.stringify({ key, completion })}\n`);
    return completion;
  }

  /** Streams are what the timing benchmark measures: never cached. */
  stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<ChatStreamEvent> {
    return this.inner.stream(messages, signal);
  }

  checkReady(signal?: AbortSignal): Promise<void> {
    return this.inner.checkReady?.(signal) ?? Promise.resolve();
  }
}
