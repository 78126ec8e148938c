import type { ChatModel } from '../chat/chat-model.ts';
import type { Logger } from '../logger.ts';
import { timed, type Telemetry } from '../telemetry.ts';
import { inSpan, modelCallSpan } from '../tracing/spans.ts';
import { CONDENSE_MAX_TOKENS, CONDENSE_PROMPT_VERSION, CONDENSE_TIMEOUT_MS, condensedQuery, condenseMessages } from './condense.ts';
import type { ConversationTurn } from './conversation.ts';
import { expandFollowUp } from './expand-follow-up.ts';

/** How the text searched for was made: the question itself (no earlier turn), condensed by the gateway, or expanded without it. */
export type SearchQueryMethod = 'question' | 'condensed' | 'expanded';

export interface SearchQuery {
  text: string;
  method: SearchQueryMethod;
  /** A condensed follow-up's LLM-free expansion, searched beside it when FOLLOW_UP_SEARCH=fused (pipeline/answer.ts). */
  expanded?: string;
}

export interface SearchQueryOptions {
  chatModel?: ChatModel | undefined;
  telemetry: Telemetry;
  logger?: Pick<Logger, 'warn'> | undefined;
  /** Tests shorten it. */
  condenseTimeoutMs?: number | undefined;
}

/**
 * What a follow-up retrieves with. With a gateway, one bounded call condenses the conversation into a
 * standalone query; without one, or when that call fails, the LLM-free expansion is used. Condensing never
 * fails the request: only the client's own abort goes through.
 */
export async function searchQueryFor(question: string, earlier: readonly ConversationTurn[], options: SearchQueryOptions, signal?: AbortSignal): Promise<SearchQuery> {
  if (!earlier.some((turn) => turn.role === 'user')) return { text: question, method: 'question' };
  const expanded: SearchQuery = { text: expandFollowUp(question, earlier), method: 'expanded' };
  if (!options.chatModel) {
    options.telemetry.recordFollowUp('expanded');
    return expanded;
  }
  try {
    const text = await condense(options.chatModel, question, earlier, options, signal);
    if (text === undefined) throw new Error('the gateway replied without a query');
    options.telemetry.recordFollowUp('condensed');
    return { text, method: 'condensed', expanded: expanded.text };
  } catch (error) {
    if (signal?.aborted) throw error;
    options.telemetry.recordFollowUp('condense_failed');
    options.logger?.warn({ err: error, promptVersion: CONDENSE_PROMPT_VERSION }, 'condensing the conversation failed: searching with the LLM-free follow-up query');
    return expanded;
  }
}

async function condense(chatModel: ChatModel, question: string, earlier: readonly ConversationTurn[], options: SearchQueryOptions, signal?: AbortSignal): Promise<string | undefined> {
  const deadline = AbortSignal.timeout(options.condenseTimeoutMs ?? CONDENSE_TIMEOUT_MS);
  const bounded = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const [name, spanOptions] = modelCallSpan('chat', chatModel.modelId, 'openai', { 'rag.stage': 'condense', 'rag.condense.prompt_version': CONDENSE_PROMPT_VERSION });
  const completion = await inSpan(name, spanOptions, () =>
    timed(
      () => chatModel.complete(condenseMessages(question, earlier), bounded, { maxTokens: CONDENSE_MAX_TOKENS }),
      (seconds) => {
        options.telemetry.recordStage('condense', seconds);
        options.telemetry.recordModelCall('chat', 'openai', chatModel.modelId, seconds);
      },
    ),
  );
  if (completion.usage) options.telemetry.recordTokens(chatModel.modelId, completion.usage.promptTokens, completion.usage.completionTokens);
  return condensedQuery(completion.content);
}
