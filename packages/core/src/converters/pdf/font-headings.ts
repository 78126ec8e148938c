import type { MarkedLine } from './heading-lines.ts';
import type { TextLine } from './page-lines.ts';

/**
 * Headings of a PDF without an outline, from font sizes: a line set clearly larger than the body text (the
 * size most characters have), short, with a letter in it and not ending as a sentence or a clause does,
 * is a heading; one wrapped over two lines is one heading. Levels follow the sizes, the largest 1. Three or
 * more such lines in a row are a large-type passage (a title page's blurb), not a heading.
 */
const LARGER_THAN_BODY = 1.15;
const MAX_HEADING_CHARACTERS = 120;
const MAX_HEADING_LINES = 2;
const MAX_LEVEL = 6;
const CLAUSE_END = /[.,;:!]$/;

export function fontSizeHeadings(pages: readonly TextLine[][]): MarkedLine[][] {
  const body = bodySize(pages);
  const isCandidate = (line: TextLine): boolean =>
    line.size >= body * LARGER_THAN_BODY && line.text.length <= MAX_HEADING_CHARACTERS && /\p{L}/u.test(line.text) && !CLAUSE_END.test(line.text);
  const levels = levelsBySize(pages.flat().filter(isCandidate));
  return pages.map((lines) => markPage(lines, isCandidate, levels));
}

function markPage(lines: readonly TextLine[], isCandidate: (line: TextLine) => boolean, levels: Map<number, number>): MarkedLine[] {
  const marked: MarkedLine[] = [];
  for (let index = 0; index < lines.length; ) {
    const run = runOfSameSize(lines, index, isCandidate);
    if (run === 0) {
      marked.push(lines[index]!);
      index += 1;
      continue;
    }
    const group = lines.slice(index, index + run);
    if (run <= MAX_HEADING_LINES) {
      marked.push({ ...group[0]!, text: group.map((line) => line.text).join(' '), headingLevel: levels.get(sizeKey(group[0]!.size)) ?? MAX_LEVEL });
    } else {
      marked.push(...group);
    }
    index += run;
  }
  return marked;
}

/** How many candidate lines of the same size start at `index` (0 when that line is no candidate). */
function runOfSameSize(lines: readonly TextLine[], index: number, isCandidate: (line: TextLine) => boolean): number {
  const first = lines[index]!;
  let end = index;
  while (end < lines.length && isCandidate(lines[end]!) && sizeKey(lines[end]!.size) === sizeKey(first.size)) end += 1;
  return end - index;
}

/** The font size with the most characters: the body text's. */
function bodySize(pages: readonly TextLine[][]): number {
  const characters = new Map<number, number>();
  for (const line of pages.flat()) characters.set(sizeKey(line.size), (characters.get(sizeKey(line.size)) ?? 0) + line.text.length);
  let body = 0;
  let most = -1;
  for (const [size, count] of characters) {
    if (count > most) [body, most] = [size, count];
  }
  return body;
}

function levelsBySize(headings: readonly TextLine[]): Map<number, number> {
  const sizes = [...new Set(headings.map((line) => sizeKey(line.size)))].sort((a, b) => b - a);
  return new Map(sizes.map((size, rank) => [size, Math.min(rank + 1, MAX_LEVEL)]));
}

/** Sizes to the half point: one style's lines differ in the last decimals. */
function sizeKey(size: number): number {
  return Math.round(size * 2) / 2;
}
