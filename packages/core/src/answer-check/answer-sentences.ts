import { labelsInText } from '../chat/citations.ts';
import { UNSUPPORTED_MARK } from './unsupported-mark.ts';

/** One sentence of an answer: its text without citation brackets, and the labels it cites. */
export interface AnswerSentence {
  /** The sentence as written, citations included (what a reader sees). */
  text: string;
  /** The sentence without its citation brackets: what is compared with the passages. */
  claim: string;
  /** The labels of its citation brackets (`P2`, `docs/x.md#3`), in order, distinct. */
  labels: string[];
  /** Where `text` stands in the answer: `answer.slice(start, end)` is the sentence as written, its citations included. */
  start: number;
  end: number;
  /** The server marked it as supported by no passage (UNSUPPORTED_MARK); the mark is no part of the claim. */
  marked: boolean;
}

/**
 * Sentence boundaries as Unicode's default rules give them (UAX #29, through Intl.Segmenter), within each
 * line: a Markdown list item or a heading is a sentence of its own even without a full stop. Lines of a
 * fenced code block are left out: code is quoted, not claimed.
 */
const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
const FENCE = /^\s*(```|~~~)/;
/** Citation brackets standing at the start of a segment belong to the sentence before them ("… end. [P1] Next …"). */
const LEADING_CITATIONS = /^(\s*\[[^\[\]\n]+\])+/;
const LIST_MARKER = /^\s*(?:[-*+]|\d+[.)]|#{1,6})\s+/;

export function answerSentences(answer: string, isKnown: (label: string) => boolean): AnswerSentence[] {
  const sentences: AnswerSentence[] = [];
  let inFence = false;
  let lineStart = 0;
  for (const line of answer.split('\n')) {
    const start = lineStart;
    lineStart += line.length + 1;
    if (FENCE.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence || line.trim() === '') continue;
    const marker = LIST_MARKER.exec(line)?.[0] ?? '';
    for (const { segment, index } of segmentsOutsideCode(line.slice(marker.length))) {
      const segmentStart = start + marker.length + index;
      const leading = LEADING_CITATIONS.exec(segment)?.[0] ?? '';
      const previous = sentences.at(-1);
      const attached = leading.trim() !== '' && previous !== undefined && citesOnly(leading, isKnown);
      if (attached) {
        previous.text = `${previous.text} ${leading.trim()}`;
        previous.labels = distinct([...previous.labels, ...labelsOf(leading, isKnown)]);
        previous.end = segmentStart + leading.length;
      }
      const rest = attached ? segment.slice(leading.length) : segment;
      if (rest.trim() === '') continue;
      const restStart = segmentStart + (attached ? leading.length : 0) + (rest.length - rest.trimStart().length);
      sentences.push(sentenceOf(rest.trim(), restStart, isKnown));
    }
  }
  return sentences;
}

/** Unicode's sentence segments, a segment ending inside an inline code span (`a.b`) joined with the next. */
function segmentsOutsideCode(line: string): Array<{ segment: string; index: number }> {
  const joined: Array<{ segment: string; index: number }> = [];
  let open: { segment: string; index: number } | undefined;
  for (const { segment, index } of segmenter.segment(line)) {
    open = open ? { segment: open.segment + segment, index: open.index } : { segment, index };
    if ((open.segment.match(/`/g)?.length ?? 0) % 2 === 0) {
      joined.push(open);
      open = undefined;
    }
  }
  if (open) joined.push(open);
  return joined;
}

function sentenceOf(text: string, start: number, isKnown: (label: string) => boolean): AnswerSentence {
  const labels = labelsInText(text, isKnown);
  let claim = '';
  let copied = 0;
  // Drop each citation bracket whole: its labels are not words of the claim.
  for (const bracket of text.matchAll(/\[([^\[\]\n]+)\]/g)) {
    const inside = labels.filter(({ start }) => start > bracket.index && start < bracket.index + bracket[0].length);
    if (inside.length === 0) continue;
    claim += text.slice(copied, bracket.index);
    copied = bracket.index + bracket[0].length;
  }
  claim += text.slice(copied);
  const marked = claim.includes(UNSUPPORTED_MARK);
  claim = claim.replaceAll(UNSUPPORTED_MARK, '');
  return { text, claim: claim.replace(/\s+/g, ' ').replace(/\s+([.,;:!?])/g, '$1').trim(), labels: distinct(labels.map(({ label }) => label)), start, end: start + text.length, marked };
}

function labelsOf(text: string, isKnown: (label: string) => boolean): string[] {
  return labelsInText(text, isKnown).map(({ label }) => label);
}

function citesOnly(text: string, isKnown: (label: string) => boolean): boolean {
  return labelsOf(text, isKnown).length > 0;
}

function distinct(labels: string[]): string[] {
  return [...new Set(labels)];
}
