import { labelsInText } from '../chat/citations.ts';

/** One sentence of an answer: its text without citation brackets, and the labels it cites. */
export interface AnswerSentence {
  /** The sentence as written, citations included (what a reader sees). */
  text: string;
  /** The sentence without its citation brackets: what is compared with the passages. */
  claim: string;
  /** The labels of its citation brackets (`P2`, `docs/x.md#3`), in order, distinct. */
  labels: string[];
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
  for (const line of answer.split('\n')) {
    if (FENCE.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence || line.trim() === '') continue;
    for (const { segment } of segmenter.segment(line.replace(LIST_MARKER, ''))) {
      const leading = LEADING_CITATIONS.exec(segment)?.[0] ?? '';
      const previous = sentences.at(-1);
      if (leading && previous && leading.trim() !== '' && citesOnly(leading, isKnown)) {
        previous.text = `${previous.text} ${leading.trim()}`;
        previous.labels = distinct([...previous.labels, ...labelsOf(leading, isKnown)]);
      }
      const rest = leading && previous && citesOnly(leading, isKnown) ? segment.slice(leading.length) : segment;
      if (rest.trim() !== '') sentences.push(sentenceOf(rest.trim(), isKnown));
    }
  }
  return sentences;
}

function sentenceOf(text: string, isKnown: (label: string) => boolean): AnswerSentence {
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
  return { text, claim: claim.replace(/\s+/g, ' ').replace(/\s+([.,;:!?])/g, '$1').trim(), labels: distinct(labels.map(({ label }) => label)) };
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
