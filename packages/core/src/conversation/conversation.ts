import { RagError } from '../errors.ts';
import type { ChatMessage } from '../chat/chat-model.ts';
import { EARLIER_TURNS_RULE, neutralise } from '../chat/prompt.ts';

/** One earlier turn of a conversation: what the user asked, or what was answered. */
export interface ConversationTurn {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * Bounds on the earlier turns a request may carry: each turn is sent to the gateway again (condensing,
 * answering), so an unbounded history would make every follow-up slower and dearer than the last.
 */
export const MAX_CONVERSATION_TURNS = 20;
export const MAX_CONVERSATION_CHARS = 16_000;

/** Refuses a conversation past the bounds with RAG_CONVERSATION_TOO_LONG, saying which bound. */
export function assertConversationBounds(turns: readonly ConversationTurn[]): void {
  if (turns.length > MAX_CONVERSATION_TURNS) throw new RagError('RAG_CONVERSATION_TOO_LONG', `Got ${turns.length} earlier turns.`);
  const chars = turns.reduce((sum, turn) => sum + turn.content.length, 0);
  if (chars > MAX_CONVERSATION_CHARS) throw new RagError('RAG_CONVERSATION_TOO_LONG', `Got ${chars} characters of earlier turns.`);
}

/** The most recent turns that fit the bounds (for clients that always send the whole thread, as OpenAI's do). */
export function recentTurns(turns: readonly ConversationTurn[]): ConversationTurn[] {
  const kept: ConversationTurn[] = [];
  let chars = 0;
  for (let index = turns.length - 1; index >= 0 && kept.length < MAX_CONVERSATION_TURNS; index -= 1) {
    const turn = turns[index]!;
    if (chars + turn.content.length > MAX_CONVERSATION_CHARS) break;
    chars += turn.content.length;
    kept.unshift(turn);
  }
  return kept;
}

/** `[{question, answer}]` (the /chat and MCP `history` shape) as turns. */
export function turnsFromHistory(history: ReadonlyArray<{ question: string; answer: string }>): ConversationTurn[] {
  return history.flatMap(({ question, answer }) => [
    { role: 'user' as const, content: question },
    { role: 'assistant' as const, content: answer },
  ]);
}

/**
 * The earlier turns inserted between the system rules and the question, so that the model reads "that"
 * in a follow-up as the user meant it. They are neutralised like passages: an earlier answer quotes
 * `[source#chunk]` labels, which must not pass for the prompt's own [P1] labels. The rules then gain
 * EARLIER_TURNS_RULE; without earlier turns the messages are returned as they are, byte for byte.
 */
export function withEarlierTurns(messages: ChatMessage[], earlier: readonly ConversationTurn[]): ChatMessage[] {
  if (earlier.length === 0) return messages;
  const [system, ...rest] = messages;
  const turns = earlier.map((turn) => ({ role: turn.role, content: neutralise(turn.content) }));
  if (!system) return [...turns, ...rest];
  return [{ ...system, content: `${system.content}\n${EARLIER_TURNS_RULE}` }, ...turns, ...rest];
}
