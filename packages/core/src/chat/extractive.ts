import type { SearchHit } from '../domain.ts';
import { passageLabel } from './citations.ts';
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

function sentencesOf(body: string): string[] {
  return withoutCodeBlocks(body)
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0);
}

/** The passage's sentences that share most with the question, kept in document order. */
function bestSentences(question: string, body: string): string[] {
  const scored = sentencesOf(body).map((sentence, position) => ({ sentence, position, coverage: queryCoverage(question, sentence) }));
  const chosen = scored
    .filter(({ coverage }) => coverage > 0)
    .sort((a, b) => b.coverage - a.coverage || a.position - b.position)
    .slice(0, MAX_QUOTED_SENTENCES)
    .sort((a, b) => a.position - b.position);
  return chosen.length > 0 ? chosen.map(({ sentence }) => sentence) : scored.slice(0, MAX_QUOTED_SENTENCES).map(({ sentence }) => sentence);
}

/**
 * The answer when no language model is configured: the most relevant sentences of the best
 * passages, quoted and labelled `[source#chunk_index]`.
 */
export function extractiveAnswer(question: string, passages: SearchHit[]): string {
  const quotes = passages.slice(0, MAX_PASSAGES).map((hit) => {
    const quote = bestSentences(question, passageBody(hit.text)).join(' ');
    return `> ${quote} [${passageLabel(hit)}]`;
  });
  return `No language model is configured (GATEWAY_URL), so here are the most relevant passages:\n\n${quotes.join('\n\n')}`;
}
