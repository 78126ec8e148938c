import { isDeclined, passageLabel, resolveCitations, type ChatModel, type SearchHit } from '@rag/core';
import type { EvalBackend, EvalPassage } from './backend.ts';
import type { GoldenSet } from './golden-set.ts';
import { mean } from './metrics.ts';
import { judgeMessages, parseVerdict } from './judge-prompt.ts';

/**
 * Answer-level evaluation of a golden set through /chat: citations must refer to passages that were
 * given, out-of-scope questions must be declined, and the gateway's model judges faithfulness.
 * Reported only: an LLM's numbers vary from run to run, so they never gate.
 */

export interface AnswerOutcome {
  number: number;
  question: string;
  inScope: boolean;
  declined: boolean;
  citations: number;
  unknownCitations: string[];
  faithfulness: number | undefined;
  judgeReason: string | undefined;
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
  meanFaithfulness: number | undefined;
  judged: number;
  judgeFailures: number;
}

/** Whether an answer declines: one rule for the service, the grounding check and the evaluation (core answer-check/declines.ts). */
export { isDeclined };

function asHit(passage: EvalPassage): SearchHit {
  return { id: passageLabel(passage), ...passage, fusionScore: passage.score };
}

export async function evaluateAnswers(set: GoldenSet, backend: EvalBackend, judge: ChatModel, k: number, gateway: string): Promise<AnswerEvaluation> {
  const outcomes: AnswerOutcome[] = [];
  const verdictFailures: number[] = [];
  for (const entry of set.questions) {
    // The passages /chat was given: the same retrieval, at the k /chat uses.
    const passages = (await backend.search(entry.question, k)).map(asHit);
    const reply = await backend.chat(entry.question);
    const resolved = resolveCitations(reply.answer, passages);
    const unknown = [...new Set([...resolved.unknownCitations, ...reply.unknownCitations])];
    const declined = isDeclined(reply.answer);
    let faithfulness: number | undefined;
    let judgeReason: string | undefined;
    if (!declined) {
      const messages = judgeMessages(entry.question, passages.map((hit) => ({ label: passageLabel(hit), text: hit.text })), reply.answer);
      const verdict = parseVerdict((await judge.complete(messages)).content);
      if (verdict) {
        faithfulness = verdict.faithfulness;
        judgeReason = verdict.reason;
      } else {
        verdictFailures.push(entry.number);
        judgeReason = 'unreadable verdict';
      }
    }
    outcomes.push({
      number: entry.number,
      question: entry.question,
      inScope: entry.expectedSource !== undefined,
      declined,
      citations: resolved.citations.length,
      unknownCitations: unknown,
      faithfulness,
      judgeReason,
    });
  }
  const inScope = outcomes.filter((outcome) => outcome.inScope);
  const outOfScope = outcomes.filter((outcome) => !outcome.inScope);
  const scores = outcomes.flatMap((outcome) => (outcome.faithfulness === undefined ? [] : [outcome.faithfulness]));
  return {
    gateway,
    inScope,
    outOfScope,
    unknownCitations: outcomes.reduce((sum, outcome) => sum + outcome.unknownCitations.length, 0),
    answersWithUnknownCitations: outcomes.filter((outcome) => outcome.unknownCitations.length > 0).length,
    uncitedInScope: inScope.filter((outcome) => !outcome.declined && outcome.citations === 0).length,
    inScopeDeclined: inScope.filter((outcome) => outcome.declined).length,
    outOfScopeDeclined: outOfScope.filter((outcome) => outcome.declined).length,
    meanFaithfulness: scores.length > 0 ? mean(scores) : undefined,
    judged: scores.length,
    judgeFailures: verdictFailures.length,
  };
}
