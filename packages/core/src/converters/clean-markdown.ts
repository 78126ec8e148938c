/**
 * Markdown a converter wrote (docling-serve's), made clean chunk text as the HTML converter writes it: no
 * Markdown escaping (`pg\_dump` is `pg_dump`), link text without its target, pictures by their alt text,
 * strong emphasis as plain text, compact tables. Its structure is read first, so that unescaping cannot
 * turn a text line into a heading; code is left as it is. Lines keep their number, so that page starts and
 * item boxes, which lie at line starts, are moved line for line.
 */
import { markdownStructure } from '../chunking/markdown-sections.ts';
import type { ConvertedDocument } from './converter.ts';

/** docling writes a Word document's headings down to `######`. */
const MAX_HEADING_LEVEL = 6;
const CODE_SPAN = /(`+)[^`]*?\1/g;
const IMAGE = /!\[([^\]\n]*)\]\([^)\n]*\)/g;
const LINK = /\[([^\]\n]+)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+"[^"\n]*")?\)/g;
const AUTOLINK = /<((?:https?|mailto):[^>\s]+)>/g;
const HTML_COMMENT = /<!--.*?-->/g;
/** Bounded, so that a line of unmatched markers costs what its length does. */
const STRONG = /\*\*([^*\n]{1,300}?)\*\*|__([^_\n]{1,300}?)__/g;
/** CommonMark's backslash escapes: any ASCII punctuation (https://spec.commonmark.org/0.31.2/#backslash-escapes). */
const ESCAPE = /\\([!-/:-@[-`{-~])/g;
const TABLE_ROW = /^\|.*\|$/;
const SEPARATOR_CELL = /^:?-+:?$/;

export function cleanConvertedMarkdown(document: ConvertedDocument): ConvertedDocument {
  const structure = markdownStructure(document.markdown, MAX_HEADING_LEVEL);
  const lines = document.markdown.split('\n');
  const inCode = new Set<number>();
  for (const { openingLine, closingLine } of structure.codeBlocks) for (let line = openingLine; line <= closingLine; line += 1) inCode.add(line);
  const cleaned = lines.map((line, index) => (inCode.has(index) ? line : cleanLine(line)));
  const headings = structure.headings.map((heading) => ({ ...heading, text: cleanInline(heading.text) }));
  const markdown = cleaned.join('\n');
  const moved = offsetMover(lines, cleaned);
  return {
    ...document,
    markdown,
    structure: { headings, codeBlocks: structure.codeBlocks },
    pages: document.pages?.map((start) => ({ ...start, offset: moved(start.offset) })),
    boxes: document.boxes?.map((item) => ({ ...item, offset: moved(item.offset) })),
  };
}

function cleanLine(line: string): string {
  const trimmed = line.trim();
  return TABLE_ROW.test(trimmed) ? compactTableRow(trimmed) : cleanInline(line);
}

/** A table row without padding; a separator row as `| --- | --- |`. */
function compactTableRow(row: string): string {
  const cells = row.slice(1, -1).split('|').map((cell) => cell.trim());
  if (cells.every((cell) => SEPARATOR_CELL.test(cell))) return `|${' --- |'.repeat(cells.length)}`;
  return `| ${cells.map(cleanInline).join(' | ')} |`;
}

/** The text of a line outside its code spans, cleaned; code spans as they are. */
export function cleanInline(text: string): string {
  let result = '';
  let copied = 0;
  for (const span of text.matchAll(CODE_SPAN)) {
    result += cleanProse(text.slice(copied, span.index)) + span[0];
    copied = span.index + span[0].length;
  }
  return result + cleanProse(text.slice(copied));
}

function cleanProse(text: string): string {
  return text
    .replace(HTML_COMMENT, '')
    .replace(IMAGE, (_, alt: string) => alt)
    .replace(LINK, (_, label: string) => label)
    .replace(AUTOLINK, (_, url: string) => url)
    .replace(STRONG, (_, stars?: string, underscores?: string) => stars ?? underscores ?? '')
    .replace(ESCAPE, (_, character: string) => character);
}

/** Moves an offset at a line's start (or within it) of the original text to the same line of the cleaned one. */
function offsetMover(before: readonly string[], after: readonly string[]): (offset: number) => number {
  const startsBefore = lineStarts(before);
  const startsAfter = lineStarts(after);
  return (offset) => {
    let low = 0;
    let high = startsBefore.length - 1;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (startsBefore[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return startsAfter[low]! + Math.min(offset - startsBefore[low]!, after[low]!.length);
  };
}

function lineStarts(lines: readonly string[]): number[] {
  const starts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    starts.push(offset);
    offset += line.length + 1;
  }
  return starts;
}
