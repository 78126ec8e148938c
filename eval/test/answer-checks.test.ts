import { contentStems, sentenceSupport, SUPPORT_THRESHOLD, UNSUPPORTED_MARK, type SearchHit } from '@rag/core';
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

const outcome = (declined: boolean, inScope: boolean, checks: Partial<AnswerOutcome['checks']>, keyFacts?: boolean[]): AnswerOutcome => ({
  number: 1, question: 'q', answer: 'a', inScope, declined, citations: 0, unknownCitations: [], keyFacts, faithfulness: undefined, judgeReason: undefined,
  checks: { claims: 0, citedPairs: 0, supportingPairs: 0, claimsSupportedByCitation: 0, unsupported: 0, unmarked: 0, attributed: 0, miscited: 0, grounded: true, flagged: [], ...checks },
});

describe('the deterministic answer checks', () => {
  it('counts the unsupported sentences a reader sees unmarked, not those the server marked', () => {
    const checks = checkAnswer(`Restores are filed through the ServiceNow portal ${UNSUPPORTED_MARK}. Parking is free on Fridays.`, passages);
    expect([checks.unsupported, checks.unmarked]).toEqual([2, 1]);
  });

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

  it('takes a sentence\'s stems without its citation labels: a sentence its passage supports at the threshold counts as a supporting pair', () => {
    // 20 distinct content stems; the passage holds 11 of them (0.55, the threshold). Counted with its label's
    // stem ("p1"), the sentence would have 21, and the passage 11 / 21 = 0.52 of them: below the threshold.
    const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango'.split(' ');
    const passage = hit('notes.md', `${words.slice(0, 11).join(' ')} whiskey zulu.`);
    const sentence = `${words.join(' ')}.`;
    expect(sentenceSupport(contentStems(sentence), contentStems(passage.text))).toBe(SUPPORT_THRESHOLD);
    expect(sentenceSupport(contentStems(`${sentence} [P1]`), contentStems(passage.text))).toBeLessThan(SUPPORT_THRESHOLD);

    const checks = checkAnswer(`${words.join(' ')} [P1].`, [passage]);
    expect(checks.grounding.sentences[0]).toMatchObject({ status: 'supported', cited: ['notes.md#0'] });
    expect(checks).toMatchObject({ claims: 1, citedPairs: 1, supportingPairs: 1, claimsSupportedByCitation: 1, unsupported: 0 });
    // Two labels after the sentence, as models write them: still the sentence's own stems only.
    expect(checkAnswer(`${words.join(' ')} [P1][P2].`, [passage, passages[1]!])).toMatchObject({ citedPairs: 2, supportingPairs: 1, claimsSupportedByCitation: 1 });
  });

  it('gates on the rates, naming each one below its floor', () => {
    const rates = answerRates(
      [outcome(false, true, { claims: 4, citedPairs: 2, supportingPairs: 2, claimsSupportedByCitation: 2, unsupported: 2, grounded: false }, [true, false]), outcome(true, true, {}, [false])],
      [outcome(true, false, {}), outcome(false, false, {})],
    );
    expect(rates).toMatchObject({ citationPrecision: 1, citationRecall: 0.5, unsupportedRate: 0.5, ungroundedAnswers: 1, outOfScopeDeclinedRate: 0.5, keyFactsCorrect: 0, keyFactQuestions: 2 });
    const gate = answerGateResult({ minCitationPrecision: 0.9, minCitationRecall: undefined, maxUnsupportedRate: 0.3, minOutOfScopeDeclined: 1, minKeyFacts: undefined, why: 'test' }, rates);
    expect(gate.passed).toBe(false);
    expect(gate.failures).toEqual(['out-of-scope declined 0.500 < 1', 'unsupported-sentence rate 0.500 > 0.3']);
  });

  it('fails closed on a rate that could not be measured: every min_* and max_* gate on a missing rate fails, named n/a', () => {
    // Every in-scope question declined (no claim, no citation), no out-of-scope question, no key facts: nothing to measure.
    const rates = answerRates([outcome(true, true, {}), outcome(true, true, {})], []);
    expect(rates).toMatchObject({ citationPrecision: undefined, citationRecall: undefined, unsupportedRate: undefined, outOfScopeDeclinedRate: undefined, keyFactsCorrect: undefined, claims: 0 });
    const gate = answerGateResult({ minCitationPrecision: 0.9, minCitationRecall: 0.8, maxUnsupportedRate: 0.3, minOutOfScopeDeclined: 1, minKeyFacts: 0.5, why: 'test' }, rates);
    expect(gate.passed).toBe(false);
    expect(gate.failures).toEqual([
      'citation precision n/a < 0.9',
      'citation recall n/a < 0.8',
      'out-of-scope declined n/a < 1',
      'key facts correct n/a < 0.5',
      'unsupported-sentence rate n/a > 0.3',
    ]);
    // Each gate alone fails on its missing rate; with no gate set, nothing is asked and the run passes.
    const none = { minCitationPrecision: undefined, minCitationRecall: undefined, maxUnsupportedRate: undefined, minOutOfScopeDeclined: undefined, minKeyFacts: undefined, why: 'test' };
    for (const only of ['minCitationPrecision', 'minCitationRecall', 'maxUnsupportedRate', 'minOutOfScopeDeclined', 'minKeyFacts'] as const) {
      expect(answerGateResult({ ...none, [only]: 0.5 }, rates).failures, only).toHaveLength(1);
    }
    expect(answerGateResult(none, rates)).toMatchObject({ passed: true, failures: [] });
  });
});
