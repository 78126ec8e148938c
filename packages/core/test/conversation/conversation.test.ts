import { describe, expect, it } from 'vitest';
import { condensedQuery, condenseMessages } from '../../src/conversation/condense.ts';
import { expandFollowUp } from '../../src/conversation/expand-follow-up.ts';
import { assertConversationBounds, MAX_CONVERSATION_CHARS, recentTurns, withEarlierTurns, type ConversationTurn } from '../../src/conversation/conversation.ts';

const turn = (role: 'user' | 'assistant', content: string): ConversationTurn => ({ role, content });

describe('the condensed query in a model reply', () => {
  it('is the first non-empty line, without a "Query:" lead or quotes', () => {
    expect(condensedQuery('\n  "Query: how to disable RERANK_FALLBACK"\nbecause…')).toBe('how to disable RERANK_FALLBACK');
    expect(condensedQuery('Standalone search query: restore a snapshot')).toBe('restore a snapshot');
  });

  it('is none when the reply is empty or runs on like an answer', () => {
    expect(condensedQuery('  \n ')).toBeUndefined();
    expect(condensedQuery('x'.repeat(401))).toBeUndefined();
  });

  it('is asked with the transcript and the last question, long answers cut', () => {
    const [, user] = condenseMessages('and that?', [turn('user', 'what is X?'), turn('assistant', 'a'.repeat(2000))]);
    expect(user!.content).toContain('User: what is X?');
    expect(user!.content).toContain('Last question: and that?');
    expect(user!.content.length).toBeLessThan(1000);
  });
});

describe('conversation bounds', () => {
  it('refuses more than 20 turns or 16000 characters', () => {
    expect(() => assertConversationBounds(Array.from({ length: 20 }, () => turn('user', 'q')))).not.toThrow();
    expect(() => assertConversationBounds(Array.from({ length: 21 }, () => turn('user', 'q')))).toThrow(expect.objectContaining({ code: 'RAG_CONVERSATION_TOO_LONG' }));
    expect(() => assertConversationBounds([turn('user', 'q'.repeat(MAX_CONVERSATION_CHARS + 1))])).toThrow(expect.objectContaining({ code: 'RAG_CONVERSATION_TOO_LONG' }));
  });

  it('keeps the most recent turns within the bounds, in order', () => {
    const turns = Array.from({ length: 30 }, (_, index) => turn(index % 2 === 0 ? 'user' : 'assistant', `t${index}`));
    const kept = recentTurns(turns);
    expect(kept).toHaveLength(20);
    expect(kept[0]!.content).toBe('t10');
    expect(kept.at(-1)!.content).toBe('t29');
    expect(recentTurns([turn('user', 'x'.repeat(MAX_CONVERSATION_CHARS)), turn('user', 'last')])).toEqual([turn('user', 'last')]);
  });

  it('puts earlier turns between the rules and the question, their labels escaped', () => {
    const messages = withEarlierTurns([{ role: 'system', content: 'rules' }, { role: 'user', content: 'question' }], [turn('assistant', 'see [docs/a.md#3]')]);
    expect(messages.map((message) => message.role)).toEqual(['system', 'assistant', 'user']);
    expect(messages[1]!.content).toBe('see \\[docs/a.md#3]');
  });
});

describe('the LLM-free follow-up query', () => {
  it('is the follow-up, then the two previous questions, most recent first; answers are left out', () => {
    const earlier = [turn('user', 'first?'), turn('assistant', 'one'), turn('user', 'second?'), turn('assistant', 'two'), turn('user', 'third?'), turn('assistant', 'three')];
    expect(expandFollowUp('and then?', earlier)).toBe('and then?\nthird?\nsecond?');
  });
});
