import type { JsonSchemaFormat } from './structured-answer.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatCompletion {
  content: string;
  usage?: TokenUsage | undefined;
}

/** Per-call settings of a completion; absent fields keep the model's defaults. */
export interface CompletionOptions {
  /** OpenAI's `max_tokens`: a cap on the reply (condensing a conversation needs one line). */
  maxTokens?: number | undefined;
  /** OpenAI's `response_format`: the reply decoded under a JSON schema (structured-answer.ts). */
  responseFormat?: JsonSchemaFormat | undefined;
}

export type ChatStreamEvent = { type: 'token'; text: string } | { type: 'done'; usage?: TokenUsage | undefined };

/** An OpenAI-compatible chat model behind the gateway. */
export interface ChatModel {
  readonly modelId: string;
  complete(messages: ChatMessage[], signal?: AbortSignal, options?: CompletionOptions): Promise<ChatCompletion>;
  stream(messages: ChatMessage[], signal?: AbortSignal, options?: CompletionOptions): AsyncIterable<ChatStreamEvent>;
  checkReady?(signal?: AbortSignal): Promise<void>;
}
