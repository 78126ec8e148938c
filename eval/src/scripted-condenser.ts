import type { ChatCompletion, ChatMessage, ChatModel, ChatStreamEvent } from '@rag/core';

/**
 * A gateway that condenses deterministically: each condense call is answered with the `standalone` query
 * the golden set wrote for that follow-up, found by the "Last question:" line of the condense prompt. It
 * measures retrieval with a condenser that gets every reference right: the ceiling of the gateway mode.
 */
export class ScriptedCondenser implements ChatModel {
  readonly modelId = 'scripted-condenser';
  calls = 0;

  constructor(private readonly standaloneByFollowUp: ReadonlyMap<string, string>) {}

  async complete(messages: ChatMessage[]): Promise<ChatCompletion> {
    this.calls += 1;
    const prompt = messages.at(-1)?.content ?? '';
    const followUp = /^Last question: (.*)$/m.exec(prompt)?.[1]?.trim();
    const standalone = followUp === undefined ? undefined : this.standaloneByFollowUp.get(followUp);
    if (standalone === undefined) throw new Error(`scripted condenser: no standalone query for ${JSON.stringify(followUp)}`);
    return { content: standalone };
  }

  // eslint-disable-next-line require-yield
  async *stream(): AsyncIterable<ChatStreamEvent> {
    throw new Error('scripted condenser: condensing never streams');
  }
}
