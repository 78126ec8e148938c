import { labelsInText } from '../chat/citations.ts';
import type { Grounding, SentenceCheck } from './grounding.ts';
import { UNSUPPORTED_MARK } from './unsupported-mark.ts';

/** UNSUPPORTED_CLAIMS: a sentence no passage supports is shown marked, or left out with a notice. */
export type UnsupportedClaims = 'mark' | 'drop';

export interface VerifiedAnswer {
  /** The model's text with each claim's citations set by the check (labels as the model wrote them: `P2`). */
  text: string;
  /** Sentences left out (UNSUPPORTED_CLAIMS=drop). */
  dropped: number;
  /**
   * No claim of the answer is supported: all unsupported, or none made (a lead-in with nothing after it, a bare
   * "Yes."). Nothing in it can be shown as coming from the documents.
   */
  noSupportedClaim: boolean;
}

/**
 * The answer a user is shown, citations set by the system rather than by the model's goodwill:
 * - attributed (cites nothing, a passage supports it): the supporting passage is cited;
 * - miscited (its citations do not support it, another passage does): its citations are replaced by that passage;
 * - unsupported: its citations are removed, and it is marked (UNSUPPORTED_MARK) or left out;
 * - supported, citing passages that do not support it beside one that does: those citations are taken away (a
 *   reader who opens one would find nothing of the sentence in it);
 * - other supported sentences and no_claim ones stay as written.
 * Each citation stands where a model puts one: before the sentence's closing punctuation.
 */
export function verifyAnswer(modelText: string, grounding: Grounding, unsupportedClaims: UnsupportedClaims, isKnown: (label: string) => boolean): VerifiedAnswer {
  let text = '';
  let copied = 0;
  let dropped = 0;
  for (const sentence of grounding.sentences) {
    const replacement = verifiedSentence(modelText.slice(sentence.start, sentence.end), sentence, unsupportedClaims, isKnown);
    if (replacement === undefined) continue;
    text += modelText.slice(copied, sentence.start) + replacement;
    copied = sentence.end;
    if (replacement !== '') continue;
    dropped += 1;
    copied += /^[ \t]*/.exec(modelText.slice(copied))![0].length;
  }
  text += modelText.slice(copied);
  if (dropped > 0) text = withoutEmptyLines(text);
  const { supported, attributed, miscited } = grounding.counts;
  return { text, dropped, noSupportedClaim: supported + attributed + miscited === 0 };
}

/** The notice that ends an answer whose unsupported sentences were left out. */
export function droppedNotice(dropped: number): string {
  return dropped === 1 ? '(1 sentence was left out: no passage supports it.)' : `(${dropped} sentences were left out: no passage supports them.)`;
}

/** The sentence as shown, '' when left out, undefined when it stays as written. */
function verifiedSentence(written: string, check: SentenceCheck, unsupportedClaims: UnsupportedClaims, isKnown: (label: string) => boolean): string | undefined {
  switch (check.status) {
    case 'attributed':
    case 'miscited':
      return withCitation(withoutCitations(written, isKnown), `[${check.supportedBy!}]`);
    case 'unsupported':
      if (unsupportedClaims === 'drop') return '';
      return check.marked ? undefined : withCitation(withoutCitations(written, isKnown), UNSUPPORTED_MARK);
    case 'supported':
      if (check.supporting.length === check.cited.length) return undefined;
      return withCitation(withoutCitations(written, isKnown), check.supporting.map((label) => `[${label}]`).join(''));
    default:
      return undefined;
  }
}

const CLOSING_PUNCTUATION = /[.!?。！？]+$/u;

/** The citation before the sentence's closing punctuation, unless that punctuation ends a code span or a URL. */
function withCitation(sentence: string, bracket: string): string {
  const closing = CLOSING_PUNCTUATION.exec(sentence)?.[0] ?? '';
  const body = sentence.slice(0, sentence.length - closing.length);
  const inCode = (body.match(/`/g)?.length ?? 0) % 2 === 1;
  const inUrl = /\S*\/\S*$/.test(body) && closing !== '' && !/\s$/.test(body);
  if (inCode || inUrl) return `${sentence} ${bracket}`;
  return `${body.trimEnd()} ${bracket}${closing}`;
}

/** The sentence without its citation brackets (those holding a label, known or not) and the spaces before them. */
function withoutCitations(sentence: string, isKnown: (label: string) => boolean): string {
  return sentence
    .replace(/\s*\[[^\[\]\n]+\]/g, (bracket) => (labelsInText(bracket.trim(), isKnown).length > 0 ? '' : bracket))
    .replace(/\s+([.,;:!?])/g, '$1')
    .trim();
}

/** A line a left-out sentence emptied goes (one left blank, or holding only its list marker), and spaces it left at a line's end. */
function withoutEmptyLines(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line, index, lines) => !/^\s*(?:[-*+]|\d+[.)])$/.test(line) && !(line === '' && lines[index - 1] === ''))
    .join('\n')
    .trimEnd();
}
