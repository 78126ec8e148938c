import { HttpStatusError } from '../http/remote-call.ts';
import type { Logger } from '../logger.ts';
import type { ChatModel } from './chat-model.ts';
import type { JsonSchemaFormat } from './structured-answer.ts';

/** GATEWAY_STRUCTURED: ask for structured answers always, never, or when a canary request proves the gateway honours them. */
export type StructuredSetting = 'auto' | 'json_schema' | 'off';
/** What /readyz reports: the answers' shape, or `undecided` while the canary could not reach the gateway. */
export type StructuredState = 'json_schema' | 'off' | 'undecided';

const CANARY_VALUE = 'rag-canary-7d1e';
/** A schema no unconstrained model satisfies by chance: one field whose only allowed value is an arbitrary string. */
const CANARY_FORMAT: JsonSchemaFormat = {
  type: 'json_schema',
  json_schema: { name: 'canary', strict: true, schema: { type: 'object', properties: { answer: { type: 'string', enum: [CANARY_VALUE] } }, required: ['answer'], additionalProperties: false } },
};
const CANARY_TIMEOUT_MS = 60_000;

/**
 * Whether the gateway decodes under a JSON schema. Nothing in a server's `/v1/models` or `/props` says so, and a
 * server that ignores `response_format` (llama-server given the flat form, vLLM given `guided_json` since 0.12)
 * still answers 200, so only a request proves it: the canary asks for `{"answer": "<value>"}` under a schema whose
 * only allowed value is one no model writes unprompted. Its verdict is kept for the process; a gateway it could
 * not reach is asked again on the next answer, which meanwhile takes the free-text path.
 */
export class StructuredOutput {
  private state: StructuredState;
  private probing: Promise<StructuredState> | undefined;

  constructor(
    setting: StructuredSetting,
    private readonly chatModel: ChatModel,
    private readonly logger?: Pick<Logger, 'info' | 'warn'> | undefined,
  ) {
    this.state = setting === 'auto' ? 'undecided' : setting;
  }

  get current(): StructuredState {
    return this.state;
  }

  /** True when this answer should be asked for as structured output. */
  async enabled(): Promise<boolean> {
    if (this.state === 'undecided') this.state = await this.probe();
    return this.state === 'json_schema';
  }

  /** Starts the canary now (at start-up), without waiting for it. */
  start(): void {
    if (this.state === 'undecided') void this.enabled();
  }

  private probe(): Promise<StructuredState> {
    this.probing ??= this.canary().finally(() => (this.probing = undefined));
    return this.probing;
  }

  private async canary(): Promise<StructuredState> {
    try {
      const reply = await this.chatModel.complete([{ role: 'user', content: 'Reply with the JSON object the schema allows.' }], AbortSignal.timeout(CANARY_TIMEOUT_MS), { maxTokens: 32, responseFormat: CANARY_FORMAT });
      const honoured = answerOf(reply.content) === CANARY_VALUE;
      const state: StructuredState = honoured ? 'json_schema' : 'off';
      this.logger?.info({ structuredOutput: state, model: this.chatModel.modelId }, honoured ? 'gateway honours JSON schemas: answers are structured' : 'gateway ignored a JSON schema: answers are free text');
      return state;
    } catch (error) {
      // A 4xx is the gateway refusing `response_format` (or a route that does not take it): an answer, and final.
      const status = error instanceof Error && error.cause instanceof HttpStatusError ? error.cause.status : undefined;
      if (status !== undefined && status >= 400 && status < 500) {
        this.logger?.info({ structuredOutput: 'off', status, model: this.chatModel.modelId }, 'gateway refused a JSON schema: answers are free text');
        return 'off';
      }
      this.logger?.warn({ err: error }, 'structured-output canary could not reach the gateway: free text until it can');
      return 'undecided';
    }
  }
}

function answerOf(content: string): unknown {
  try {
    return (JSON.parse(content) as { answer?: unknown } | null)?.answer;
  } catch {
    return undefined;
  }
}
