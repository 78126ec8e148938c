import type { ConvertedDocument, HeadingLine, PageStart } from '../converter.ts';
import type { MarkedLine } from './heading-lines.ts';

/**
 * A gap between two lines wider than this many times their font size starts a new paragraph (body lines sit
 * about 1.2 apart); so does a line above the previous one (the next column).
 */
const PARAGRAPH_GAP = 1.4;

/**
 * The pages' lines as one document, with where each page starts and the headings by line, given as the
 * document's structure so that the chunker reads no Markdown syntax in PDF text. A page's paragraphs are
 * separated by a blank line; a page end is a line break only, as text runs on over it, so that a chunk may
 * run over a page end as the sentence does. Pages without text are left out of the page starts.
 */
export function pagedDocument(pages: readonly MarkedLine[][]): ConvertedDocument {
  const texts: string[] = [];
  const headings: HeadingLine[] = [];
  const starts: PageStart[] = [];
  let offset = 0;
  const push = (text: string): void => {
    texts.push(text);
    offset += text.length + 1;
  };
  pages.forEach((lines, index) => {
    if (lines.length === 0) return;
    starts.push({ page: index + 1, offset });
    lines.forEach((line, lineIndex) => {
      const previous = lines[lineIndex - 1];
      if (previous && startsParagraph(previous, line)) push('');
      if (line.headingLevel !== undefined) headings.push({ line: texts.length, level: line.headingLevel, text: line.text });
      push(line.text);
    });
  });
  const markdown = texts.length > 0 ? `${texts.join('\n')}\n` : '';
  return { markdown, pages: starts, structure: { headings, codeBlocks: [] } };
}

function startsParagraph(previous: MarkedLine, line: MarkedLine): boolean {
  if (previous.headingLevel !== undefined || line.headingLevel !== undefined) return true;
  const gap = previous.y - line.y;
  return gap < 0 || gap > PARAGRAPH_GAP * Math.max(previous.size, line.size);
}
