/**
 * Markdown → sections, like LangChain's MarkdownHeaderTextSplitter (h1–h3, strip_headers) but with
 * headings and fenced code found by a CommonMark parser. Deliberate differences: DIFFERENCES.md.
 */
import { fromMarkdown } from 'mdast-util-from-markdown';
import type { DocumentStructure } from '../converters/converter.ts';
import { pythonStrip } from './split-text.ts';

export interface MarkdownSection {
  headingPath: string;
  text: string;
}

/** What a physical line (split on "\n", as LangChain does) is to the splitter. */
type LineRole =
  | { kind: 'text' }
  | { kind: 'heading'; level: number; value: string }
  | { kind: 'section-end'; level: number }
  | { kind: 'code'; fenceIndent: number };

/** The slice of mdast we read (typed here: @types/mdast is not a direct dependency). */
interface Point {
  column: number;
  offset?: number | undefined;
}

interface MdNode {
  type: string;
  depth?: number;
  children?: MdNode[];
  position?: { start: Point; end: Point } | undefined;
}

/** A section as LangChain's page_content plus what our output adds back (code indentation). */
export interface SectionLayout {
  headingPath: string;
  /** Exactly LangChain's page_content: the size splitter measures this, so chunk boundaries stay Python's. */
  langchainText: string;
  /** Indentation of fenced code lines, re-inserted at these offsets of `langchainText`. */
  codeIndents: CodeIndent[];
  /** Where each line of `langchainText` came from in the Markdown: what places a chunk on its pages. */
  lineSources: LineSource[];
}

/** A line starting at `offset` of `langchainText` whose text starts at `source` in the Markdown. */
export interface LineSource {
  offset: number;
  source: number;
}

export interface CodeIndent {
  offset: number;
  indent: string;
}

interface Heading {
  level: number;
  value: string;
}

interface Line {
  text: string;
  indent: string;
  /** Offset in the Markdown of the line's first non-blank character. */
  source: number;
}

interface Paragraph extends SectionLayout {
  metadataKey: string;
}

const MAX_HEADING_LEVEL = 3;
const NON_PRINTABLE = /(?! )[\p{C}\p{Z}]/gu;
const FENCE_ONLY = /^(`{3,}|~{3,})$/;
const PARAGRAPH_JOIN = '  \n';
const CONVERTED_PARAGRAPH_JOIN = '\n\n';
/**
 * Only block structure is read (ATX headings, fenced code), so micromark's inline constructs are
 * switched off: they are where its super-linear paths are (40 kB of `*a` took 8 s in `attention`,
 * unmatched backticks and brackets likewise), and none of them changes where a block starts or ends.
 * https://github.com/micromark/micromark#extension (`disable.null`)
 */
const BLOCKS_ONLY = { disable: { null: ['attention', 'autolink', 'codeText', 'hardBreakEscape', 'htmlText', 'labelEnd', 'labelStartImage', 'labelStartLink'] } };

/** LangChain's per-line cleaning: Python strip(), then delete what `str.isprintable()` rejects. */
export function cleanLine(line: string): string {
  return pythonStrip(line).replace(NON_PRINTABLE, '');
}

export function splitMarkdownSections(markdown: string): MarkdownSection[] {
  return splitMarkdownLayouts(markdown).map((layout) => ({
    headingPath: layout.headingPath,
    text: sectionText(layout),
  }));
}

/** The section text from `start` to `end` (offsets of `langchainText`), code indentation restored. */
export function sectionText(layout: SectionLayout, start = 0, end = layout.langchainText.length): string {
  let text = '';
  let cursor = start;
  for (const { offset, indent } of layout.codeIndents) {
    if (offset < start || offset >= end) continue;
    text += layout.langchainText.slice(cursor, offset) + indent;
    cursor = offset;
  }
  return text + layout.langchainText.slice(cursor, end);
}

/**
 * MarkdownHeaderTextSplitter's line loop, with headings and code ranges taken from the parser, or from the
 * converter's `structure` when it gives one.
 */
export function splitMarkdownLayouts(markdown: string, structure?: DocumentStructure): SectionLayout[] {
  const lines = markdown.split('\n');
  const roles = structure ? structureRoles(structure, lines.length) : lineRoles(markdown, lines);
  const paragraphs: Paragraph[] = [];
  const headings: Heading[] = [];
  let current: Line[] = [];
  const flush = (): void => {
    if (current.length > 0) paragraphs.push(paragraphOf(current, headings));
    current = [];
  };
  let lineStart = 0;
  lines.forEach((line, index) => {
    const role = roles[index] ?? { kind: 'text' };
    const source = lineStart + (line.length - line.trimStart().length);
    lineStart += line.length + 1;
    if (role.kind === 'heading') {
      flush();
      enterHeading(headings, role);
    } else if (role.kind === 'section-end') {
      flush();
      while ((headings.at(-1)?.level ?? 0) >= role.level) headings.pop();
    } else if (role.kind === 'code') {
      current.push(codeLine(line, role.fenceIndent, source));
    } else {
      const text = cleanLine(line);
      if (text !== '') current.push({ text, indent: '', source });
      else flush();
    }
  });
  flush();
  // Converted documents are not the seed's Markdown: their paragraphs stay paragraphs, which the splitter prefers to break between.
  return joinParagraphs(paragraphs, structure ? CONVERTED_PARAGRAPH_JOIN : PARAGRAPH_JOIN);
}

/** A heading closes every open heading of the same or a deeper level. */
function enterHeading(headings: Heading[], heading: Heading): void {
  while ((headings.at(-1)?.level ?? 0) >= heading.level) headings.pop();
  headings.push({ level: heading.level, value: heading.value });
}

function paragraphOf(lines: Line[], headings: Heading[]): Paragraph {
  const codeIndents: CodeIndent[] = [];
  const lineSources: LineSource[] = [];
  let offset = 0;
  for (const line of lines) {
    if (line.indent !== '') codeIndents.push({ offset, indent: line.indent });
    lineSources.push({ offset, source: line.source });
    offset += line.text.length + 1;
  }
  return {
    metadataKey: JSON.stringify(headings),
    headingPath: headings.map((h) => h.value).join(' > '),
    langchainText: lines.map((line) => line.text).join('\n'),
    codeIndents,
    lineSources,
  };
}

/** LangChain joins consecutive paragraphs under the same headings with "  \n" (a Markdown hard break). */
function joinParagraphs(paragraphs: Paragraph[], join: string): SectionLayout[] {
  const sections: Paragraph[] = [];
  for (const paragraph of paragraphs) {
    const last = sections.at(-1);
    if (last?.metadataKey !== paragraph.metadataKey) {
      sections.push({ ...paragraph, codeIndents: [...paragraph.codeIndents], lineSources: [...paragraph.lineSources] });
      continue;
    }
    const shift = last.langchainText.length + join.length;
    last.langchainText += join + paragraph.langchainText;
    last.codeIndents.push(...paragraph.codeIndents.map((c) => ({ offset: c.offset + shift, indent: c.indent })));
    last.lineSources.push(...paragraph.lineSources.map((line) => ({ offset: line.offset + shift, source: line.source })));
  }
  return sections.map(({ headingPath, langchainText, codeIndents, lineSources }) => ({ headingPath, langchainText, codeIndents, lineSources }));
}

/** Code keeps its indentation relative to the fence (YAML, Python); LangChain strips it. */
function codeLine(line: string, fenceIndent: number, source: number): Line {
  const text = cleanLine(line);
  const indent = text === '' ? '' : (/^[ \t]*/.exec(line)?.[0] ?? '');
  return { text, indent: indent.slice(Math.min(fenceIndent, indent.length)), source };
}

/** Line positions in the source; micromark drops a leading BOM from its offsets. */
interface Source {
  markdown: string;
  lines: string[];
  shift: number;
  lineStarts: number[];
}

function sourceOf(markdown: string, lines: string[]): Source {
  const lineStarts: number[] = [];
  let start = 0;
  for (const line of lines) {
    lineStarts.push(start);
    start += line.length + 1;
  }
  return { markdown, lines, shift: markdown.startsWith('\uFEFF') ? 1 : 0, lineStarts };
}

function offsetIn(source: Source, point: Point): number {
  return (point.offset ?? 0) + source.shift;
}

function lineIndexOf(source: Source, point: Point): number {
  const offset = offsetIn(source, point);
  let low = 0;
  let high = source.lineStarts.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if ((source.lineStarts[mid] ?? 0) <= offset) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** The roles a converter declared: its headings, and the lines between its code fences (written at column 0). */
function structureRoles(structure: DocumentStructure, lineCount: number): LineRole[] {
  const roles: LineRole[] = Array.from({ length: lineCount }, () => ({ kind: 'text' }));
  for (const { line, level, text } of structure.headings) {
    if (line < lineCount) roles[line] = { kind: 'heading', level, value: cleanLine(text) };
  }
  for (const { line, level } of structure.sectionEnds ?? []) {
    if (line < lineCount) roles[line] = { kind: 'section-end', level };
  }
  for (const { openingLine, closingLine } of structure.codeBlocks) {
    for (let line = openingLine + 1; line < Math.min(closingLine, lineCount); line += 1) roles[line] = { kind: 'code', fenceIndent: 0 };
  }
  return roles;
}

/**
 * The headings (ATX, top level, up to `maxLevel`; the seed's splitter reads 3) and fenced code of a Markdown
 * text, as a converter's structure: what converters that write Markdown (docling-serve) give the chunker once
 * their text is cleaned.
 */
export function markdownStructure(markdown: string, maxLevel = MAX_HEADING_LEVEL): DocumentStructure {
  const roles = lineRoles(markdown, markdown.split('\n'), maxLevel);
  const headings: DocumentStructure['headings'] = [];
  const codeBlocks: DocumentStructure['codeBlocks'] = [];
  roles.forEach((role, line) => {
    if (role.kind === 'heading') headings.push({ line, level: role.level, text: role.value });
    if (role.kind !== 'code') return;
    const last = codeBlocks.at(-1);
    // The fence lines frame the code lines: the opening one just before, the closing one just after.
    if (last && last.closingLine === line) last.closingLine = line + 1;
    else codeBlocks.push({ openingLine: line - 1, closingLine: line + 1 });
  });
  return { headings, codeBlocks };
}

function lineRoles(markdown: string, lines: string[], maxLevel = MAX_HEADING_LEVEL): LineRole[] {
  const source = sourceOf(markdown, lines);
  const roles: LineRole[] = lines.map(() => ({ kind: 'text' }));
  const root = fromMarkdown(markdown, { extensions: [BLOCKS_ONLY] }) as MdNode;
  for (const node of root.children ?? []) {
    const heading = atxHeading(node, source, maxLevel);
    if (heading) roles[heading.line] = heading.role;
  }
  for (const code of fencedCodeBlocks(root, source)) {
    for (let line = code.firstLine + 1; line <= code.lastLine; line += 1) {
      roles[line] = { kind: 'code', fenceIndent: code.fenceIndent };
    }
  }
  return roles;
}

/** Only top-level ATX headings of depth 1–3 split; setext and nested (quote, list) ones stay text. */
function atxHeading(node: MdNode, source: Source, maxLevel: number): { line: number; role: LineRole } | undefined {
  const position = node.position;
  if (node.type !== 'heading' || !position || (node.depth ?? 0) > maxLevel) return undefined;
  const line = lineIndexOf(source, position.start);
  if (line !== lineIndexOf(source, position.end)) return undefined;
  if (!source.markdown.startsWith('#', offsetIn(source, position.start))) return undefined;
  return { line, role: { kind: 'heading', level: node.depth ?? 1, value: headingValue(node, source) } };
}

/** The heading's inline source (markup kept, closing `#`s dropped), cleaned like a line. */
function headingValue(node: MdNode, source: Source): string {
  const first = node.children?.[0]?.position;
  const last = node.children?.at(-1)?.position;
  if (!first || !last) return '';
  return cleanLine(source.markdown.slice(offsetIn(source, first.start), offsetIn(source, last.end)));
}

interface FencedCode {
  firstLine: number;
  lastLine: number;
  fenceIndent: number;
}

/** Line ranges of fenced code content: after the opening fence up to (not including) the closing one. */
function fencedCodeBlocks(node: MdNode, source: Source): FencedCode[] {
  const nested = (node.children ?? []).flatMap((child) => fencedCodeBlocks(child, source));
  const position = node.position;
  if (node.type !== 'code' || !position) return nested;
  const start = offsetIn(source, position.start);
  if (!/^(```|~~~)/.test(source.markdown.slice(start, start + 3))) return nested;
  const firstLine = lineIndexOf(source, position.start);
  const endLine = lineIndexOf(source, position.end);
  const closed = endLine > firstLine && FENCE_ONLY.test(cleanLine(source.lines[endLine] ?? ''));
  return [{ firstLine, lastLine: closed ? endLine - 1 : endLine, fenceIndent: position.start.column - 1 }];
}
