/**
 * ChatModel behind the OpenAI-compatible LLM gateway (Envoy in front of vLLM GPU and CPU tiers).
 * API: https://platform.openai.com/docs/api-reference/chat (POST /v1/chat/completions, GET /v1/models)
 * Streaming: https://platform.openai.com/docs/api-reference/chat-streaming — server-sent events, one
 * `data: {chat.completion.chunk}` per event, `choices[0].delta.content` carries text; with
 * `stream_options.include_usage` a last chunk has `choices: []` and `usage`; the stream ends with `data: [DONE]`.
 */
import { RagError } from '../errors.ts';
import { bearer, callJson, callStream, describeEndpoint, endpoint } from '../http/remote-call.ts';
import type { ChatCompletion, ChatMessage, ChatModel, ChatStreamEvent, CompletionOptions, TokenUsage } from './chat-model.ts';

export interface OpenAiGatewayOptions {
  url: string;
  apiKey?: string | undefined;
  model?: string | undefined;
  timeoutMs?: number | undefined;
  temperature?: number | undefined;
  retries?: number | undefined;
  /** First retry backoff; tests shorten it. */
  minBackoffMs?: number | undefined;
}

interface OpenAiUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

interface ChatCompletionBody {
  choices?: Array<{ message?: { content?: string | null } }>;
  usage?: OpenAiUsage | null;
}

interface ChatCompletionChunk {
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: OpenAiUsage | null;
  /** vLLM reports a failure after the stream started as an event with an error object. */
  error?: { message?: string } | string;
}

/** Readiness is a probe: it must answer fast even when completions may take minutes. */
const READY_TIMEOUT_MS = 5_000;

export class OpenAiGatewayChatModel implements ChatModel {
  readonly modelId: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: OpenAiGatewayOptions) {
    this.modelId = options.model ?? 'qwen3-4b-cpu';
    this.timeoutMs = options.timeoutMs ?? 300_000;
  }

  async complete(messages: ChatMessage[], signal?: AbortSignal, options?: CompletionOptions): Promise<ChatCompletion> {
    const answer = await callJson<ChatCompletionBody>({ ...this.call(signal), body: this.requestBody(messages, false, options) });
    const choice = answer.choices?.[0];
    if (!choice) throw this.badAnswer('a completion without choices');
    return { content: choice.message?.content ?? '', usage: toUsage(answer.usage) };
  }

  async *stream(messages: ChatMessage[], signal?: AbortSignal, options?: CompletionOptions): AsyncIterable<ChatStreamEvent> {
    const response = await callStream({ ...this.call(signal), body: this.requestBody(messages, true, options) });
    let usage: TokenUsage | undefined;
    let finished = false;
    for await (const data of sseData(response.body)) {
      if (data === '[DONE]') {
        yield { type: 'done', usage };
        return;
      }
      const chunk = this.parseChunk(data);
      const text = chunk.choices?.[0]?.delta?.content;
      if (text) yield { type: 'token', text };
      usage = toUsage(chunk.usage) ?? usage;
      finished ||= Boolean(chunk.choices?.[0]?.finish_reason);
    }
    // Some servers close without [DONE]; that is only an outage when no choice had finished.
    if (!finished) throw this.badAnswer('a stream that ended before the completion finished');
    yield { type: 'done', usage };
  }

  /** The gateway is up when it lists its models; a chat completion would be far too slow for a probe. */
  async checkReady(signal?: AbortSignal): Promise<void> {
    await callJson<unknown>({ ...this.call(signal), url: endpoint(this.options.url, '/v1/models'), method: 'GET', timeoutMs: Math.min(this.timeoutMs, READY_TIMEOUT_MS), retries: 0 });
  }

  private call(signal: AbortSignal | undefined) {
    return {
      dependency: 'gateway' as const,
      url: endpoint(this.options.url, '/v1/chat/completions'),
      headers: bearer(this.options.apiKey),
      timeoutMs: this.timeoutMs,
      retries: this.options.retries,
      minBackoffMs: this.options.minBackoffMs,
      signal,
    };
  }

  private requestBody(messages: ChatMessage[], stream: boolean, options: CompletionOptions = {}): Record<string, unknown> {
    return {
      model: this.modelId,
      messages,
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
      ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
      ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
      ...(options.responseFormat === undefined ? {} : { response_format: options.responseFormat }),
    };
  }

  private parseChunk(data: string): ChatCompletionChunk {
    let chunk: ChatCompletionChunk;
    try {
      chunk = JSON.parse(data) as ChatCompletionChunk;
    } catch (error) {
      throw new RagError('RAG_GATEWAY_UNAVAILABLE', `(${describeEndpoint(this.options.url)} streamed invalid JSON)`, { cause: error });
    }
    if (chunk.error) {
      const message = typeof chunk.error === 'string' ? chunk.error : (chunk.error.message ?? 'an error');
      throw this.badAnswer(`an error mid-stream: ${message.slice(0, 200)}`);
    }
    return chunk;
  }

  private badAnswer(what: string): RagError {
    return new RagError('RAG_GATEWAY_UNAVAILABLE', `(${describeEndpoint(this.options.url)} answered ${what})`);
  }
}

function toUsage(usage: OpenAiUsage | null | undefined): TokenUsage | undefined {
  if (!usage) return undefined;
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: usage.total_tokens ?? promptTokens + completionTokens };
}

/**
 * The `data` of each server-sent event (https://html.spec.whatwg.org/multipage/server-sent-events.html):
 * lines end with \n or \r\n, a blank line ends an event, several `data:` lines join with \n,
 * lines starting with ':' are comments (proxies' keep-alives). Stopping early cancels the body,
 * which closes the upstream connection.
 */
export async function* sseData(body: ReadableStream<Uint8Array> | null): AsyncGenerator<string> {
  if (!body) return;
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let dataLines: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (line === '') {
          if (dataLines.length > 0) yield dataLines.join('\n');
          dataLines = [];
        } else if (line.startsWith('data:')) {
          dataLines.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
      }
    }
    // An event cut off by the end of the body still counts (the spec drops it; being lenient costs nothing).
    const last = buffer.replace(/\r$/, '');
    if (last.startsWith('data:')) dataLines.push(last.slice(last.startsWith('data: ') ? 6 : 5));
    if (dataLines.length > 0) yield dataLines.join('\n');
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
