import type { SearchHit } from '@rag/core';
import { describe, expect, it } from 'vitest';
import { checkAnswer, keyFactsFound } from '../src/answer-checks.ts';
import { answerGateResult, answerRates, type AnswerOutcome } from '../src/answers.ts';

function hit(source: string, body: string): SearchHit {
  return { id: `${source}#0`, source, headingPath: '', chunkIndex: 0, text: `${source}\n\n${body}`, score: 1, fusionScore: 1 };
}

const passages = [
  hit('backups.md', 'Nightly snapshots of every database are kept for thirty days, then deleted.'),
  hit('vpn.md', 'The VPN client must be updated to version 4.2 before March; older clients are refused.'),
];

describe('the deterministic answer checks', () => {
  it('counts citation precision over (sentence, cited passage) pairs and recall over claim sentences', () => {
    const checks = checkAnswer(
      'Nightly database snapshots are kept thirty days [backups.md#0]. The VPN client needs version 4.2 [backups.md#0]. Restores are filed through the ServiceNow portal.',
      passages,
    );
    expect(checks).toMatchObject({ claims: 3, citedPairs: 2, supportingPairs: 1, claimsSupportedByCitation: 1, unsupported: 1, miscited: 1, attributed: 0 });
  });

  it('finds key facts by any of their alternatives, case and spacing ignored', () => {
    expect(keyFactsFound('Pods get `10.4.0.0/14`; chunks of 1200   characters.', [['10.4.0.0/14'], ['1200 characters', '1,200 characters'], ['200 overlap']])).toEqual([true, true, false]);
  });

  it('gates on the rates, naming each one below its floor', () => {
    const outcome = (declined: boolean, inScope: boolean, checks: Partial<AnswerOutcome['checks']>, keyFacts?: boolean[]): AnswerOutcome => ({
      number: 1, question: 'q', answer: 'a', inScope, declined, citations: 0, unknownCitations: [], keyFacts, faithfulness: undefined, judgeReason: undefined,
      checks: { claims: 0, citedPairs: 0, supportingPairs: 0, claimsSupportedByCitation: 0, unsupported: 0, attributed: 0, miscited: 0, grounded: true, flagged: [], ...checks },
    });
    const rates = answerRates(
      [outcome(false, true, { claims: 4, citedPairs: 2, supportingPairs: 2, claimsSupportedByCitation: 2, unsupported: 2, grounded: false }, [true, false]), outcome(true, true, {}, [false])],
      [outcome(true, false, {}), outcome(false, false, {})],
    );
    expect(rates).toMatchObject({ citationPrecision: 1, citationRecall: 0.5, unsupportedRate: 0.5, ungroundedAnswers: 1, outOfScopeDeclinedRate: 0.5, keyFactsCorrect: 0, keyFactQuestions: 2 });
    const gate = answerGateResult({ minCitationPrecision: 0.9, minCitationRecall: undefined, maxUnsupportedRate: 0.3, minOutOfScopeDeclined: 1, minKeyFacts: undefined, why: 'test' }, rates);
    expect(gate.passed).toBe(false);
    expect(gate.failures).toEqual(['out-of-scope declined 0.500 < 1', 'unsupported-sentence rate 0.500 > 0.3']);
  });
});
