import { isDeclined, passageLabel, resolveCitations, type Bm25Language, type ChatModel, type SearchHit } from '@rag/core';
import { checkAnswer, keyFactsFound, type AnswerChecks } from './answer-checks.ts';
import type { EvalBackend, EvalPassage } from './backend.ts';
import type { AnswerGate, GoldenSet } from './golden-set.ts';
import { mean } from './metrics.ts';
import { judgeMessages, parseVerdict } from './judge-prompt.ts';

/**
 * Answer-level evaluation of a golden set through /chat. Deterministic checks, which may gate (a set's
 * `answer_gate:`): citation precision and recall and unsupported sentences (answer-checks.ts), out-of-scope
 * questions declined, key facts stated. Advisory only: the faithfulness an LLM judge gives (the gateway's
 * model, or none with --no-judge), since a judge's numbers vary with the judge.
 */

/** Whether an answer declines: one rule for the service, the grounding check and the evaluation (core answer-check/declines.ts). */
export { isDeclined };

export interface AnswerOutcome {
  number: number;
  question: string;
  answer: string;
  inScope: boolean;
  declined: boolean;
  citations: number;
  unknownCitations: string[];
  checks: Omit<AnswerChecks, 'grounding'> & { grounded: boolean; flagged: Array<{ status: string; text: string; supportedBy?: string | undefined }> };
  /** One entry per key fact of the question: stated or not; absent when the question lists none. */
  keyFacts: boolean[] | undefined;
  faithfulness: number | undefined;
  judgeReason: string | undefined;
}

export interface AnswerRates {
  citationPrecision: number | undefined;
  citationRecall: number | undefined;
  unsupportedRate: number | undefined;
  /** Unsupported sentences shown without the server's mark. */
  unmarkedUnsupported: number;
  /** Answers (in scope, not declined) with at least one unsupported sentence. */
  ungroundedAnswers: number;
  attributedSentences: number;
  miscitedSentences: number;
  claims: number;
  outOfScopeDeclinedRate: number | undefined;
  inScopeDeclinedRate: number | undefined;
  /** Share of in-scope questions with key facts whose answer states all of them. */
  keyFactsCorrect: number | undefined;
  keyFactQuestions: number;
}

export interface AnswerGateResult {
  passed: boolean;
  why: string;
  failures: string[];
}

export interface AnswerEvaluation {
  gateway: string;
  inScope: AnswerOutcome[];
  outOfScope: AnswerOutcome[];
  unknownCitations: number;
  answersWithUnknownCitations: number;
  uncitedInScope: number;
  inScopeDeclined: number;
  outOfScopeDeclined: number;
  rates: AnswerRates;
  gate: AnswerGateResult | undefined;
  meanFaithfulness: number | undefined;
  judged: number;
  judgeFailures: number;
}

function asHit(passage: EvalPassage): SearchHit {
  return { id: passageLabel(passage), ...passage, fusionScore: passage.score };
}

async function judged(judge: ChatModel | undefined, question: string, passages: SearchHit[], answer: string): Promise<{ faithfulness?: number; judgeReason?: string; unreadable: boolean }> {
  if (!judge) return { unreadable: false };
  const messages = judgeMessages(question, passages.map((hit) => ({ label: passageLabel(hit), text: hit.text })), answer);
  const verdict = parseVerdict((await judge.complete(messages)).content);
  return verdict ? { faithfulness: verdict.faithfulness, judgeReason: verdict.reason, unreadable: false } : { judgeReason: 'unreadable verdict', unreadable: true };
}

export interface AnswerEvaluationOptions {
  /** The judge of faithfulness; undefined: none (--no-judge). */
  judge?: ChatModel | undefined;
  language?: Bm25Language | undefined;
  /** `key-facts`: answer only the questions with key facts, and the out-of-scope ones (a CPU model takes a minute an answer). */
  only?: 'key-facts' | undefined;
}

export async function evaluateAnswers(set: GoldenSet, backend: EvalBackend, judge: ChatModel | undefined, k: number, gateway: string, options: AnswerEvaluationOptions = {}): Promise<AnswerEvaluation> {
  const outcomes: AnswerOutcome[] = [];
  let verdictFailures = 0;
  const language = options.language ?? set.bm25Language;
  const questions = options.only === 'key-facts' ? set.questions.filter((entry) => entry.keyFacts || entry.expectedSource === undefined) : set.questions;
  for (const entry of questions) {
    // The passages /chat was given: the same retrieval, at the k /chat uses.
    const passages = (await backend.search(entry.question, k)).map(asHit);
    const reply = await backend.chat(entry.question);
    const resolved = resolveCitations(reply.answer, passages);
    const unknown = [...new Set([...resolved.unknownCitations, ...reply.unknownCitations])];
    const declined = isDeclined(reply.answer);
    const { grounding, ...checks } = checkAnswer(reply.answer, passages, language, entry.question);
    const verdict = declined ? { unreadable: false } : await judged(judge, entry.question, passages, reply.answer);
    if (verdict.unreadable) verdictFailures += 1;
    outcomes.push({
      number: entry.number,
      question: entry.question,
      answer: reply.answer,
      inScope: entry.expectedSource !== undefined,
      declined,
      citations: resolved.citations.length,
      unknownCitations: unknown,
      checks: {
        ...checks,
        grounded: grounding.grounded,
        flagged: grounding.sentences.filter(({ status }) => status !== 'supported' && status !== 'no_claim').map(({ status, text, supportedBy }) => ({ status, text, supportedBy })),
      },
      keyFacts: entry.keyFacts && keyFactsFound(reply.answer, entry.keyFacts),
      faithfulness: verdict.faithfulness,
      judgeReason: verdict.judgeReason,
    });
  }
  const inScope = outcomes.filter((outcome) => outcome.inScope);
  const outOfScope = outcomes.filter((outcome) => !outcome.inScope);
  const scores = outcomes.flatMap((outcome) => (outcome.faithfulness === undefined ? [] : [outcome.faithfulness]));
  const rates = answerRates(inScope, outOfScope);
  return {
    gateway,
    inScope,
    outOfScope,
    unknownCitations: outcomes.reduce((sum, outcome) => sum + outcome.unknownCitations.length, 0),
    answersWithUnknownCitations: outcomes.filter((outcome) => outcome.unknownCitations.length > 0).length,
    uncitedInScope: inScope.filter((outcome) => !outcome.declined && outcome.citations === 0).length,
    inScopeDeclined: inScope.filter((outcome) => outcome.declined).length,
    outOfScopeDeclined: outOfScope.filter((outcome) => outcome.declined).length,
    rates,
    gate: set.answerGate && answerGateResult(set.answerGate, rates),
    meanFaithfulness: scores.length > 0 ? mean(scores) : undefined,
    judged: scores.length,
    judgeFailures: verdictFailures,
  };
}

function ratio(part: number, whole: number): number | undefined {
  return whole > 0 ? part / whole : undefined;
}

/** Sentence-level checks are summed over the in-scope answers the model gave (declines make no claim). */
export function answerRates(inScope: AnswerOutcome[], outOfScope: AnswerOutcome[]): AnswerRates {
  const answered = inScope.filter((outcome) => !outcome.declined);
  const sum = (pick: (outcome: AnswerOutcome) => number) => answered.reduce((total, outcome) => total + pick(outcome), 0);
  const claims = sum((outcome) => outcome.checks.claims);
  const withFacts = inScope.filter((outcome) => outcome.keyFacts !== undefined);
  return {
    citationPrecision: ratio(sum((outcome) => outcome.checks.supportingPairs), sum((outcome) => outcome.checks.citedPairs)),
    citationRecall: ratio(sum((outcome) => outcome.checks.claimsSupportedByCitation), claims),
    unsupportedRate: ratio(sum((outcome) => outcome.checks.unsupported), claims),
    unmarkedUnsupported: sum((outcome) => outcome.checks.unmarked),
    ungroundedAnswers: answered.filter((outcome) => !outcome.checks.grounded).length,
    attributedSentences: sum((outcome) => outcome.checks.attributed),
    miscitedSentences: sum((outcome) => outcome.checks.miscited),
    claims,
    outOfScopeDeclinedRate: ratio(outOfScope.filter((outcome) => outcome.declined).length, outOfScope.length),
    inScopeDeclinedRate: ratio(inScope.filter((outcome) => outcome.declined).length, inScope.length),
    keyFactsCorrect: ratio(withFacts.filter((outcome) => outcome.keyFacts!.every(Boolean)).length, withFacts.length),
    keyFactQuestions: withFacts.length,
  };
}

export function answerGateResult(gate: AnswerGate, rates: AnswerRates): AnswerGateResult {
  const failures: string[] = [];
  const atLeast = (name: string, value: number | undefined, min: number | undefined) => {
    if (min !== undefined && (value ?? 0) < min) failures.push(`${name} ${value?.toFixed(3) ?? 'n/a'} < ${min}`);
  };
  atLeast('citation precision', rates.citationPrecision, gate.minCitationPrecision);
  atLeast('citation recall', rates.citationRecall, gate.minCitationRecall);
  atLeast('out-of-scope declined', rates.outOfScopeDeclinedRate, gate.minOutOfScopeDeclined);
  atLeast('key facts correct', rates.keyFactsCorrect, gate.minKeyFacts);
  if (gate.maxUnsupportedRate !== undefined && (rates.unsupportedRate ?? 1) > gate.maxUnsupportedRate) {
    failures.push(`unsupported-sentence rate ${rates.unsupportedRate?.toFixed(3) ?? 'n/a'} > ${gate.maxUnsupportedRate}`);
  }
  return { passed: failures.length === 0, why: gate.why, failures };
}
