// Which sentence of a passage an answer's sentence stands on: word overlap between the two (no DOM here).

/** A `[source#chunk]` label in an answer. */
export const CITATION = /\[([^\[\]\s]+#\d+)\]/g;

/**
 * The least Dice overlap of content words, 2|A∩B| / (|A| + |B|), for a passage sentence to count as the
 * one cited: a quote scores 1, a close paraphrase about 0.5, an unrelated sentence of the same topic
 * rarely above 0.3.
 */
export const MIN_OVERLAP = 0.4;

// Words too common to tell two sentences apart.
const STOPWORDS = new Set(
  ('a an and are as at be but by can do does for from has have how i if in into is it its may must no not of on or ' +
    'our so such that the their then there these they this to was we were what when where which who will with you your')
    .split(' '),
);

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/** The content words of a text: lower-cased, two characters or more, stopwords left out. */
export function contentWords(text) {
  const words = String(text).toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) || [];
  return new Set(words.filter((word) => !STOPWORDS.has(word)));
}

/**
 * The sentences of a text as {start, end} offsets (Intl.Segmenter, UAX #29), surrounding spaces left out.
 * A line break counts as a space: UAX #29 ends a sentence at every one (rule SB4), but in a paragraph of
 * Markdown, and in the text of a PDF page, it is only where a line was wrapped.
 */
export function sentenceRanges(text) {
  const ranges = [];
  for (const segment of sentenceSegmenter.segment(text.replace(/\r?\n|\r/g, (lineBreak) => ' '.repeat(lineBreak.length)))) {
    const leading = segment.segment.length - segment.segment.trimStart().length;
    const trimmed = segment.segment.trim();
    if (trimmed === '') continue;
    const start = segment.index + leading;
    ranges.push({ start: start, end: start + trimmed.length });
  }
  return ranges;
}

export function overlap(first, second) {
  if (first.size === 0 || second.size === 0) return 0;
  let shared = 0;
  for (const word of first) if (second.has(word)) shared += 1;
  return (2 * shared) / (first.size + second.size);
}

/**
 * What an answer says on the strength of each citation: label → the sentences before it, back to the
 * previous label or the start of the line. Adjacent labels (`[a#0] [b#1]`) share the same words.
 */
export function claimsByCitation(answer) {
  const claims = new Map();
  for (const line of String(answer).split('\n')) {
    let at = 0;
    let claim = '';
    for (const match of line.matchAll(CITATION)) {
      const before = line.slice(at, match.index).replace(/^[\s>*+-]+(\d+\.\s+)?/, '');
      if (contentWords(before).size > 0) claim = before;
      at = match.index + match[0].length;
      if (!claim) continue;
      const sentences = sentenceRanges(claim).map((range) => claim.slice(range.start, range.end));
      claims.set(match[1], (claims.get(match[1]) || []).concat(sentences));
    }
  }
  return claims;
}

/**
 * For each claim, the passage sentence that best matches it, when it matches at least MIN_OVERLAP:
 * the indices into `sentences` (texts) to highlight.
 */
export function citedSentenceIndices(claims, sentences) {
  const sentenceWords = sentences.map(contentWords);
  const cited = new Set();
  for (const claim of claims) {
    const claimWords = contentWords(claim);
    let best = -1;
    let bestScore = MIN_OVERLAP;
    sentenceWords.forEach((words, index) => {
      const score = overlap(claimWords, words);
      if (score >= bestScore && (best === -1 || score > bestScore)) {
        best = index;
        bestScore = score;
      }
    });
    if (best !== -1) cited.add(best);
  }
  return cited;
}
