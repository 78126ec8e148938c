import type { MarkedLine } from './heading-lines.ts';
import type { OutlineHeading } from './outline.ts';
import type { TextLine } from './page-lines.ts';

/**
 * Outline headings placed in their pages' text: on the line of the destination page that reads as the
 * title (case, spacing and punctuation aside, a section number such as "6.1" or "Appendix A" before it
 * allowed, the title wrapped over two lines allowed), searched from the page's previous heading on; where
 * no line reads so, at that point (the page start for the page's first heading) as a line of its own. The
 * heading's text is the outline's title.
 */
export function placeOutlineHeadings(pages: readonly TextLine[][], outline: readonly OutlineHeading[]): MarkedLine[][] {
  const byPage = new Map<number, OutlineHeading[]>();
  for (const heading of outline) {
    if (heading.pageIndex < 0 || heading.pageIndex >= pages.length) continue;
    const onPage = byPage.get(heading.pageIndex);
    if (onPage) onPage.push(heading);
    else byPage.set(heading.pageIndex, [heading]);
  }
  return pages.map((lines, pageIndex) => placeOnPage(lines, byPage.get(pageIndex) ?? []));
}

function placeOnPage(lines: readonly TextLine[], headings: readonly OutlineHeading[]): MarkedLine[] {
  const marked: MarkedLine[] = [...lines];
  let cursor = 0;
  for (const heading of headings) {
    const found = findTitle(marked, heading.title, cursor);
    const line: MarkedLine = { text: heading.title, size: 0, y: Number.NaN, headingLevel: heading.level };
    if (found) {
      const [first] = marked.splice(found.index, found.lineCount, line);
      Object.assign(line, { size: first!.size, y: first!.y });
      cursor = found.index + 1;
    } else {
      marked.splice(cursor, 0, line);
      cursor += 1;
    }
  }
  return marked;
}

function findTitle(lines: readonly MarkedLine[], title: string, from: number): { index: number; lineCount: number } | undefined {
  const wanted = readings(title);
  if (wanted.length === 0) return undefined;
  for (let index = from; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (line.headingLevel !== undefined) continue;
    if (readsAs(line.text, wanted)) return { index, lineCount: 1 };
    const next = lines[index + 1];
    if (next && next.headingLevel === undefined && line.text.length < title.length && readsAs(`${line.text} ${next.text}`, wanted)) return { index, lineCount: 2 };
  }
  return undefined;
}

/** A section number texinfo, LaTeX and word processors print before a heading: "6", "6.1.", "A.2", "Appendix B", "Chapter 3:". */
const SECTION_NUMBER = /^(?:(?:chapter|appendix|section|part)\s+)?(?:\d+|[a-z])(?:\.\d+)*[.:]?\s+/i;

function readsAs(text: string, wanted: readonly string[]): boolean {
  return readings(text).some((reading) => wanted.includes(reading));
}

/** The text as compared, with and without a leading section number ("R interface packages" starts with one, as far as the pattern knows). */
function readings(text: string): string[] {
  return [...new Set([comparable(text), comparable(text.replace(SECTION_NUMBER, ''))])].filter((reading) => reading !== '');
}

function comparable(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}
