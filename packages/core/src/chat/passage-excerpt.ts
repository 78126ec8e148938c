import type { SearchHit } from '../domain.ts';
import type { Bm25Language } from '../sparse/languages/bm25-languages.ts';
import { passageBody } from './extractive.ts';
import { queryCoverage } from './query-coverage.ts';

/** A fenced code block is one unit; prose is cut into sentences. */
const FENCED_CODE = /^(```|~~~)[^\n]*\n[\s\S]*?(?:^\1[^\n]*$|(?![\s\S]))/gm;
const SENTENCE_END = /(?<=[.!?。！？])\s+/;

function units(body: string): string[] {
  const pieces: string[] = [];
  let copied = 0;
  for (const code of body.matchAll(FENCED_CODE)) {
    pieces.push(...prose(body.slice(copied, code.index)), code[0]);
    copied = code.index + code[0].length;
  }
  pieces.push(...prose(body.slice(copied)));
  return pieces;
}

function prose(text: string): string[] {
  return text
    .split(/\n{2,}/)
    .flatMap((block) => (/^\s*(?:[-*+|#>]|\d+[.)])/m.test(block) ? block.split('\n') : block.split(SENTENCE_END)))
    .map((unit) => unit.trim())
    .filter((unit) => unit !== '');
}

/**
 * The part of a passage the prompt carries (PROMPT_PASSAGE_CHARS): its `source > headings` line, then the
 * sentences (a code block counts as one) around the one that covers most of the question, grown a neighbour at a
 * time, after before before, while they fit in `maxChars`; `…` stands where text was left out. A small model reads
 * a prompt at tens of tokens a second on a CPU: whole passages make the first token wait for text that does not
 * answer. A passage that fits is returned whole.
 */
export function passageExcerpt(question: string, hit: SearchHit, maxChars: number, language?: Bm25Language): SearchHit {
  const body = passageBody(hit.text);
  if (body.length <= maxChars) return hit;
  const header = hit.text.slice(0, hit.text.length - body.length);
  const pieces = units(body);
  const coverage = pieces.map((unit) => queryCoverage(question, unit, language));
  const best = coverage.indexOf(Math.max(...coverage));
  let [first, last] = [best, best];
  let length = pieces[best]!.length;
  for (let grew = true; grew; ) {
    grew = false;
    for (const next of [last + 1, first - 1]) {
      const unit = pieces[next];
      if (unit === undefined || length + 1 + unit.length > maxChars) continue;
      length += 1 + unit.length;
      [first, last] = [Math.min(first, next), Math.max(last, next)];
      grew = true;
    }
  }
  const kept = pieces.slice(first, last + 1).join('\n');
  const excerpt = kept.length > maxChars ? `${kept.slice(0, maxChars)}…` : kept;
  return { ...hit, text: `${header}${first > 0 ? '…\n' : ''}${excerpt}${last < pieces.length - 1 ? '\n…' : ''}` };
}
