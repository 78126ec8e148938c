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

export type ChatStreamEvent = { type: 'token'; text: string } | { type: 'done'; usage?: TokenUsage | undefined };

/** An OpenAI-compatible chat model behind the gateway. */
export interface ChatModel {
  readonly modelId: string;
  complete(messages: ChatMessage[], signal?: AbortSignal): Promise<ChatCompletion>;
  stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<ChatStreamEvent>;
  checkReady?(signal?: AbortSignal): Promise<void>;
}
