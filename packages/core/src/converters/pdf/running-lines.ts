import type { TextLine } from './page-lines.ts';

/**
 * Running heads and footers, dropped from the indexed text: repeated on every page, they would match every
 * query about the chapter. A page's top (bottom) line, by its height on the page whatever its place in the
 * content stream, is one when
 * - it is a bare page number, or
 * - its text, numbers aside, is the top (bottom) line of at least MIN_REPEATS pages, or
 * - it stands apart (a gap of more than SET_APART times its size to the next line), at the height where at
 *   least half the pages have a line standing apart so: "Chapter 2: Spreadsheet-like data 9" over a texinfo
 *   manual's pages changes with the chapter, its place does not.
 */
const MIN_REPEATS = 3;
const SET_APART = 2;
const PAGE_NUMBER = /^(?:page\s+)?(?:\d{1,5}|[ivxlcdm]{1,8})(?:\s*(?:of|\/)\s*\d{1,5})?$/i;

type Edge = 'top' | 'bottom';

/** A page's line at an edge and the line next to it towards the page's middle. */
interface EdgeLines {
  line: TextLine;
  neighbour: TextLine;
}

export function dropRunningLines(pages: readonly TextLine[][]): TextLine[][] {
  const repeats = new Map<string, number>();
  for (const lines of pages) {
    for (const edge of ['top', 'bottom'] as const) {
      const edgeLines = edgeLinesOf(edge, lines);
      for (const key of edgeLines ? [textKey(edge, edgeLines), placeKey(edge, edgeLines)] : []) {
        if (key !== undefined) repeats.set(key, (repeats.get(key) ?? 0) + 1);
      }
    }
  }
  const placeRepeats = Math.max(MIN_REPEATS, pages.length / 2);
  const isRunning = (edge: Edge, edgeLines: EdgeLines): boolean => {
    const place = placeKey(edge, edgeLines);
    return (
      PAGE_NUMBER.test(edgeLines.line.text) ||
      (repeats.get(textKey(edge, edgeLines)) ?? 0) >= MIN_REPEATS ||
      (place !== undefined && (repeats.get(place) ?? 0) >= placeRepeats)
    );
  };
  return pages.map((lines) => {
    const running = new Set<TextLine>();
    for (const edge of ['top', 'bottom'] as const) {
      const edgeLines = edgeLinesOf(edge, lines);
      if (edgeLines && isRunning(edge, edgeLines)) running.add(edgeLines.line);
    }
    return running.size === 0 ? lines : lines.filter((line) => !running.has(line));
  });
}

/** The highest (lowest) line of a page of two lines or more, and the one below (above) it. */
function edgeLinesOf(edge: Edge, lines: readonly TextLine[]): EdgeLines | undefined {
  const sign = edge === 'top' ? 1 : -1;
  let line: TextLine | undefined;
  let neighbour: TextLine | undefined;
  for (const candidate of lines) {
    if (!line || sign * candidate.y > sign * line.y) [line, neighbour] = [candidate, line];
    else if (!neighbour || sign * candidate.y > sign * neighbour.y) neighbour = candidate;
  }
  return line && neighbour ? { line, neighbour } : undefined;
}

/** Page numbers inside a running head change from page to page: digits do not count. */
function textKey(edge: Edge, { line }: EdgeLines): string {
  return `${edge}\n${line.text.toLowerCase().replace(/\d+/g, '#')}`;
}

function placeKey(edge: Edge, { line, neighbour }: EdgeLines): string | undefined {
  if (Math.abs(line.y - neighbour.y) <= SET_APART * line.size) return undefined;
  return `${edge}@${Math.round(line.y)}`;
}
