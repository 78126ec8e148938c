import { checkGrounding, claimStems, contentStems, passageLabel, sentenceSupport, SUPPORT_THRESHOLD, type Bm25Language, type Grounding, type SearchHit } from '@rag/core';

/**
 * The deterministic checks of one generated answer, over the passages it was written from (ALCE's
 * citation precision and recall, with our lexical support rule standing in for its NLI model:
 * https://arxiv.org/abs/2305.14627):
 *   - citation precision: of the (sentence, cited passage) pairs, the share where that passage supports the sentence;
 *   - citation recall: of the sentences making a claim, the share whose citations include a passage supporting it;
 *   - unsupported: sentences making a claim that no passage given supports (cited or not).
 */
export interface AnswerChecks {
  grounding: Grounding;
  claims: number;
  citedPairs: number;
  supportingPairs: number;
  claimsSupportedByCitation: number;
  unsupported: number;
  /** Unsupported sentences shown without the server's mark (UNSUPPORTED_MARK): what a reader would take as fact. */
  unmarked: number;
  attributed: number;
  miscited: number;
}

export function checkAnswer(answer: string, passages: readonly SearchHit[], language?: Bm25Language, question?: string): AnswerChecks {
  const grounding = checkGrounding(answer, passages, language, question);
  const asked = question === undefined ? new Set<string>() : contentStems(question, language);
  const stemsOf = new Map(passages.map((hit) => [passageLabel(hit), contentStems(hit.text, language)]));
  let claims = 0;
  let citedPairs = 0;
  let supportingPairs = 0;
  let claimsSupportedByCitation = 0;
  for (const sentence of grounding.sentences) {
    if (sentence.status === 'no_claim') continue;
    claims += 1;
    const stems = claimStems(sentence.text.replace(/\[[^\[\]\n]+\]/g, ' '), asked, language) ?? new Set<string>();
    const supports = sentence.cited.map((label) => sentenceSupport(stems, stemsOf.get(label) ?? new Set<string>()) >= SUPPORT_THRESHOLD);
    citedPairs += supports.length;
    supportingPairs += supports.filter(Boolean).length;
    if (supports.some(Boolean)) claimsSupportedByCitation += 1;
  }
  const { unsupported, attributed, miscited } = grounding.counts;
  const unmarked = grounding.sentences.filter((sentence) => sentence.status === 'unsupported' && !sentence.marked).length;
  return { grounding, claims, citedPairs, supportingPairs, claimsSupportedByCitation, unsupported, unmarked, attributed, miscited };
}

/** Which key facts (each a list of alternatives) the answer states, case and spacing ignored. */
export function keyFactsFound(answer: string, keyFacts: readonly string[][]): boolean[] {
  const text = normalise(answer);
  return keyFacts.map((alternatives) => alternatives.some((alternative) => text.includes(normalise(alternative))));
}

function normalise(text: string): string {
  return text.toLowerCase().replace(/[`*_]/g, '').replace(/\s+/g, ' ');
}
