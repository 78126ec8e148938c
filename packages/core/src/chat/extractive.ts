import type { SearchHit } from '../domain.ts';
import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';
import { passageLabel } from './citations.ts';
import { bm25Stems } from '../sparse/tokenize.ts';
import { queryCoverage } from './query-coverage.ts';

const MAX_QUOTED_SENTENCES = 3;
const MAX_PASSAGES = 2;

export const NOT_COVERED_ANSWER = 'The indexed documents do not cover this question.';

/** The chunk text without its `<source> > <headings>` prefix line. */
export function passageBody(text: string): string {
  const separator = text.indexOf('\n\n');
  return separator === -1 ? text : text.slice(separator + 2);
}

/** Prose only: a quoted shell command rarely answers a question, and code reads badly inline. */
function withoutCodeBlocks(body: string): string {
  return body.replace(/^(```|~~~)[^\n]*\n[\s\S]*?(^\1[^\n]*$|(?![\s\S]))/gm, '');
}

/** A line that is a block of its own (heading, list item, table row, quote), never the continuation of another. */
const BLOCK_LINE = /^\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|\||>)/;

/**
 * Joins the lines of a wrapped paragraph (PDF text, hard-wrapped Markdown) so that a sentence broken across
 * lines is one sentence; blank lines and block lines still end one.
 */
function unwrapLines(body: string): string {
  const lines = body.split('\n');
  let text = lines[0] ?? '';
  for (let index = 1; index < lines.length; index += 1) {
    const previous = lines[index - 1]!;
    const line = lines[index]!;
    const continues = line.trim() !== '' && previous.trim() !== '' && !BLOCK_LINE.test(line) && !/^\s*(?:#{1,6}\s|\|)/.test(previous);
    text += continues ? ` ${line.trim()}` : `\n${line}`;
  }
  return text;
}

function sentencesOf(body: string): string[] {
  return unwrapLines(withoutCodeBlocks(body))
    .split(/(?<=[.!?])\s+|(?<=[。！？])|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0);
}

/** A passage is quoted when its best sentence covers at least this share of the best sentence found. */
const QUOTE_COVERAGE_RATIO = 0.75;

interface Quotable {
  hit: SearchHit;
  sentences: string[];
  bestCoverage: number;
}

/** The passage's prose sentences that share words with the question (at most three, the best), in document order. */
function matchingSentences(question: string, hit: SearchHit, language: Bm25Language | undefined): Quotable {
  const scored = sentencesOf(passageBody(hit.text))
    .map((sentence, position) => ({ sentence, position, coverage: queryCoverage(question, sentence, language) }))
    .filter(({ coverage }) => coverage > 0)
    .sort((a, b) => b.coverage - a.coverage || a.position - b.position)
    .slice(0, MAX_QUOTED_SENTENCES);
  const sentences = scored.sort((a, b) => a.position - b.position).map(({ sentence }) => sentence);
  return { hit, sentences, bestCoverage: Math.max(0, ...scored.map(({ coverage }) => coverage)) };
}

/** The passage's sentences as a quotation, each labelled: every sentence shown is cited. */
function quote(sentences: string[], hit: SearchHit): string {
  return `> ${sentences.map((sentence) => `${sentence} [${passageLabel(hit)}]`).join(' ')}`;
}

/**
 * How well a sentence singles out the answer: the question's stems it holds, each weighted by how rare it is among
 * all the sentences quoted (BM25's IDF). Orders the quotes, so that the sentence (and the passage) holding the one
 * rare term the question turns on comes first, not the one holding three words every sentence shares.
 */
function rarityScorer(question: string, quotables: Quotable[], language: Bm25Language | undefined): (sentence: string) => number {
  const wanted = [...new Set(bm25Stems(question, language))];
  const stemsOf = new Map(quotables.flatMap(({ sentences }) => sentences).map((sentence) => [sentence, new Set(bm25Stems(sentence, language))]));
  const all = [...stemsOf.values()];
  const weight = new Map(wanted.map((stem) => [stem, idf(all.filter((stems) => stems.has(stem)).length, all.length)]));
  return (sentence) => wanted.reduce((sum, stem) => sum + (stemsOf.get(sentence)?.has(stem) ? weight.get(stem)! : 0), 0);
}

function idf(documentFrequency: number, documents: number): number {
  return Math.log(1 + (documents - documentFrequency + 0.5) / (documentFrequency + 0.5));
}

/**
 * The answer when no language model is configured: the sentences of the best passages that share
 * words with the question, quoted, each labelled `[source#chunk_index]`, the passage whose sentence holds the
 * question's rarest terms first (in ranking order with `keepRankOrder`: a freshness-boosted ranking), and within a
 * passage that sentence first. A passage
 * whose prose matches much less than the best match (it ranked through its headings or code, or one
 * stray word) is left out; if nothing matches, the best passage's opening sentences stand in.
 * `quoted` are the passages quoted, in the answer's order: the citations come from them, never from
 * the answer's text, where a quoted document could have written a label of its own.
 */
export function extractiveAnswerWithSources(question: string, passages: SearchHit[], language?: Bm25Language, options: { keepRankOrder?: boolean } = {}): { answer: string; quoted: SearchHit[] } {
  const candidates = passages.map((hit) => matchingSentences(question, hit, language));
  const bestCoverage = Math.max(0, ...candidates.map((candidate) => candidate.bestCoverage));
  const chosen = candidates
    .filter((candidate) => candidate.sentences.length > 0 && candidate.bestCoverage >= QUOTE_COVERAGE_RATIO * bestCoverage)
    .slice(0, MAX_PASSAGES);
  const rarity = rarityScorer(question, chosen, language);
  if (!options.keepRankOrder) {
    const best = new Map(chosen.map((quotable) => [quotable, Math.max(0, ...quotable.sentences.map(rarity))]));
    chosen.sort((a, b) => best.get(b)! - best.get(a)!);
  }
  // Within a passage too, the sentence that singles the answer out comes first (a stable sort keeps ties in document order).
  for (const quotable of chosen) quotable.sentences.sort((a, b) => rarity(b) - rarity(a));
  const best = passages[0];
  if (chosen.length === 0 && best) chosen.push({ hit: best, sentences: sentencesOf(passageBody(best.text)).slice(0, MAX_QUOTED_SENTENCES), bestCoverage: 0 });
  const quotes = chosen.map(({ hit, sentences }) => quote(sentences, hit));
  return {
    answer: `No language model is configured (GATEWAY_URL), so here are the most relevant passages:\n\n${quotes.join('\n\n')}`,
    quoted: chosen.map(({ hit }) => hit),
  };
}

export function extractiveAnswer(question: string, passages: SearchHit[], language?: Bm25Language): string {
  return extractiveAnswerWithSources(question, passages, language).answer;
}
