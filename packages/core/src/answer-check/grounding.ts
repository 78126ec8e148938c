import { passageLabel, passagesByLabel } from '../chat/citations.ts';
import type { SearchHit } from '../domain.ts';
import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';
import { answerSentences, type AnswerSentence } from './answer-sentences.ts';
import { isDeclined } from './declines.ts';
import { contentStems, sentenceSupport } from './sentence-support.ts';

/**
 * A passage supports a sentence when it holds at least this share of the sentence's content stems.
 * Chosen by measurement (eval/reports/grounding-threshold.md, eval/src/grounding-calibration.ts): the best
 * balanced accuracy on restated and foreign sentences over the project-docs corpus; on vllm-gke and the
 * Nimbus FAQ, which it was not tuned on, it flags 3 % and 0 % of supported sentences and lets 19 % and 0 %
 * of unsupported ones through.
 */
export const SUPPORT_THRESHOLD = 0.55;
/** A sentence with fewer content stems makes no checkable claim ("Yes.", "In short:"). */
export const MIN_CLAIM_STEMS = 2;
/** A sentence ending in a colon introduces what follows ("Two things matter here:"); the claims are the lines after it. */
const LEAD_IN = /:$/;

/**
 * supported: a passage it cites supports it (`supporting` lists each that does). miscited: it cites passages that do not, another given passage
 * does. attributed: it cites nothing, and a given passage supports it. unsupported: no given passage does.
 * no_claim: too short to check, a lead-in ending in a colon, or it says the documents do not cover the question.
 */
export type SentenceStatus = 'supported' | 'miscited' | 'attributed' | 'unsupported' | 'no_claim';

export interface SentenceCheck {
  text: string;
  status: SentenceStatus;
  /** `source#chunk_index` of each given passage the sentence cites. */
  cited: string[];
  /** Those of `cited` that support it on their own; a citation that does not is shown to no one (verified-answer.ts). */
  supporting: string[];
  /** The passage that supports it best, when one reaches the threshold. */
  supportedBy?: string | undefined;
  /** The best support among the passages it cites, or among all when it cites none (0 to 1). */
  support: number;
  /** Where it stands in the answer checked (`answer.slice(start, end)`), its citations included. */
  start: number;
  end: number;
  /** It carries the server's UNSUPPORTED_MARK. */
  marked: boolean;
}

export interface Grounding {
  /** No sentence is unsupported (an answer making no claim is grounded). */
  grounded: boolean;
  threshold: number;
  sentences: SentenceCheck[];
  counts: Record<SentenceStatus, number>;
}

interface ScoredPassage {
  label: string;
  stems: Set<string>;
}

/**
 * Checks every sentence of a generated answer against the passages it was written from: the ones it cites,
 * and the others, so that an uncited sentence can be attributed and a wrong citation shown. Deterministic
 * and lexical (sentence-support.ts); the labels are the prompt's ([P2]) or `source#n`.
 */
export function checkGrounding(answer: string, passages: readonly SearchHit[], language?: Bm25Language, question?: string): Grounding {
  return new GroundingChecker(passages, language, question).check(answer);
}

/**
 * checkGrounding for one set of passages and one question, checked again and again as a streamed answer grows
 * (verified-stream.ts): the passages are stemmed once, and each sentence is checked once. Checking the whole
 * text anew as each sentence settled stemmed every passage and every earlier sentence again, work that grew with
 * the square of the answer.
 */
export class GroundingChecker {
  private readonly byLabel: ReadonlyMap<string, SearchHit>;
  private readonly asked: ReadonlySet<string>;
  private readonly scored: ReadonlyMap<SearchHit, ScoredPassage>;
  private readonly checks = new Map<string, Omit<SentenceCheck, 'start' | 'end' | 'marked'>>();

  constructor(passages: readonly SearchHit[], private readonly language?: Bm25Language, question?: string) {
    this.byLabel = passagesByLabel(passages);
    this.asked = question === undefined ? new Set<string>() : contentStems(question, language);
    this.scored = new Map(passages.map((hit) => [hit, { label: passageLabel(hit), stems: contentStems(hit.text, language) }]));
  }

  check(answer: string): Grounding {
    const sentences = answerSentences(answer, (label) => this.byLabel.has(label)).map((sentence) => ({ ...this.checkOnce(sentence), start: sentence.start, end: sentence.end, marked: sentence.marked }));
    const counts: Record<SentenceStatus, number> = { supported: 0, miscited: 0, attributed: 0, unsupported: 0, no_claim: 0 };
    for (const sentence of sentences) counts[sentence.status] += 1;
    return { grounded: counts.unsupported === 0, threshold: SUPPORT_THRESHOLD, sentences, counts };
  }

  private checkOnce(sentence: AnswerSentence): Omit<SentenceCheck, 'start' | 'end' | 'marked'> {
    const key = JSON.stringify([sentence.text, sentence.claim, sentence.labels]);
    const known = this.checks.get(key);
    if (known) return known;
    const cited = [...new Set(sentence.labels.flatMap((label) => (this.byLabel.has(label) ? [this.scored.get(this.byLabel.get(label)!)!] : [])))];
    const checked = checkSentence(sentence.text, sentence.claim, cited, [...this.scored.values()], this.asked, this.language);
    this.checks.set(key, checked);
    return checked;
  }
}

function checkSentence(text: string, claim: string, cited: ScoredPassage[], all: ScoredPassage[], asked: ReadonlySet<string>, language?: Bm25Language): Omit<SentenceCheck, 'start' | 'end' | 'marked'> {
  const citedLabels = cited.map(({ label }) => label);
  const stems = claimStems(claim, asked, language);
  if (stems === undefined) return { text, status: 'no_claim', cited: citedLabels, supporting: citedLabels, support: 0 };
  const supporting = cited.filter((passage) => sentenceSupport(stems, passage.stems) >= SUPPORT_THRESHOLD).map(({ label }) => label);
  const bestCited = best(stems, cited);
  if (bestCited && bestCited.support >= SUPPORT_THRESHOLD) return { text, status: 'supported', cited: citedLabels, supporting, supportedBy: bestCited.label, support: bestCited.support };
  const bestOverall = best(stems, all);
  const support = cited.length > 0 ? (bestCited?.support ?? 0) : (bestOverall?.support ?? 0);
  if (bestOverall && bestOverall.support >= SUPPORT_THRESHOLD) {
    return { text, status: cited.length > 0 ? 'miscited' : 'attributed', cited: citedLabels, supporting, supportedBy: bestOverall.label, support };
  }
  return { text, status: 'unsupported', cited: citedLabels, supporting, support };
}

/**
 * The stems a sentence claims: its content stems, less those of the question it answers, which it may restate
 * ("The big model runs on g2-standard-8 in us-central1-a" for "Which machine runs the big model?"): the check
 * weighs what the sentence adds. Undefined when it makes no checkable claim.
 */
export function claimStems(claim: string, asked: ReadonlySet<string>, language?: Bm25Language): Set<string> | undefined {
  const stems = contentStems(claim, language);
  if (stems.size < MIN_CLAIM_STEMS || isDeclined(claim) || LEAD_IN.test(claim)) return undefined;
  const added = new Set([...stems].filter((stem) => !asked.has(stem)));
  return added.size > 0 ? added : undefined;
}

function best(stems: ReadonlySet<string>, passages: readonly ScoredPassage[]): { label: string; support: number } | undefined {
  let found: { label: string; support: number } | undefined;
  for (const passage of passages) {
    const support = sentenceSupport(stems, passage.stems);
    if (!found || support > found.support) found = { label: passage.label, support };
  }
  return found;
}
