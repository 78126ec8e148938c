/**
 * Every interface shows a generated answer as the grounding check verified it (core answer-check/verified-answer.ts):
 * the sentence the model left uncited is cited by the system, the one no passage supports is marked, or left out
 * with a notice under UNSUPPORTED_CLAIMS=drop, and an answer with no supported claim is the not-covered answer.
 * /chat (JSON and stream), /v1/chat/completions and MCP ask, over real HTTP against the handbook fixture.
 */
import { NOT_COVERED_ANSWER, UNSUPPORTED_MARK, type ChatCompletion, type ChatModel, type ChatStreamEvent, type UnsupportedClaims } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersInEveryInterface } from './every-interface.ts';
import { postJson, startTestStack, type TestStack } from './test-stack.ts';

const QUESTION = 'How many days a week can I work from home?';
/** Restates the handbook without a citation, then says what no passage says, citing the first passage. */
const MODEL_ANSWER = 'Everyone may work from home up to three days a week. The office gym opens at six on weekdays [P1].';
const CITED = /^Everyone may work from home up to three days a week \[onboarding\.md#\d+\]\./;

class ScriptedModel implements ChatModel {
  readonly modelId = 'scripted';
  constructor(private readonly text: string) {}
  async complete(): Promise<ChatCompletion> {
    return { content: this.text };
  }
  async *stream(): AsyncIterable<ChatStreamEvent> {
    for (const piece of this.text.match(/[\s\S]{1,4}/g)!) yield { type: 'token', text: piece };
    yield { type: 'done' };
  }
}

describe.each<[UnsupportedClaims, RegExp]>([
  ['mark', new RegExp(`${CITED.source} The office gym opens at six on weekdays ${UNSUPPORTED_MARK.replace(/[[\]]/g, '\\$&')}\\.$`)],
  ['drop', new RegExp(`${CITED.source}\\n\\n\\(1 sentence was left out: no passage supports it\\.\\)$`)],
])('UNSUPPORTED_CLAIMS=%s', (unsupportedClaims, expected) => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ chatModel: new ScriptedModel(MODEL_ANSWER), unsupportedClaims });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('cites the uncited sentence and marks or drops the unsupported one, the same in every interface', async () => {
    const shown = await answersInEveryInterface(stack, QUESTION);
    for (const [name, answer] of Object.entries(shown)) expect(answer, name).toMatch(expected);
  });

  it('lists as citations only the passages that support a sentence shown, and reports the check', async () => {
    const { body } = await postJson(stack.baseUrl, '/chat', { query: QUESTION });
    expect(body.citations.map((citation: { source: string }) => citation.source)).toEqual(['onboarding.md']);
    expect(body.grounding).toMatchObject({ grounded: false, unsupported: 1, attributed: 1 });
  });
});

describe('an answer none of whose claims a passage supports', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ chatModel: new ScriptedModel('The office gym opens at six on weekdays [P1]. Parking is free on Fridays.') });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('says the documents do not cover the question, in every interface, citing nothing', async () => {
    const shown = await answersInEveryInterface(stack, QUESTION);
    for (const [name, answer] of Object.entries(shown)) expect(answer, name).toBe(NOT_COVERED_ANSWER);
    const { body } = await postJson(stack.baseUrl, '/chat', { query: QUESTION });
    expect(body.citations).toEqual([]);
    expect(body.grounding).toMatchObject({ grounded: false, unsupported: 2 });
  });
});
