import { RagError } from '../errors.ts';

/** How far a Markdown document may nest, and how long its lines may be, before it is refused unparsed. */
export interface MarkdownLimits {
  /**
   * Characters parsed at all. The parse is linear but blocks the event loop (about a second per MB of
   * real docs on a busy 2-core machine, several at the deepest nesting allowed), and with it the
   * `<collection>.writing` heartbeat, which servers ignore after 30 s, and SIGTERM handling.
   */
  maxChars: number;
  /** Characters in one line: minified or embedded data (a base64 picture), not prose. */
  maxLineChars: number;
  /** Containers open on one line: blockquote markers plus nested list items. */
  maxNesting: number;
}

/**
 * micromark re-checks every open container on every line, so its work grows with lines × depth, and it
 * recurses per level: `>` × 10,000 overflowed the stack, a list 200 deep took seconds. Real documents
 * nest a few levels; a CommonMark list needs 2 columns of indentation per level.
 */
export const DEFAULT_MARKDOWN_LIMITS: MarkdownLimits = { maxChars: 10_000_000, maxLineChars: 200_000, maxNesting: 64 };

const FENCE = /^(`{3,}|~{3,})/;
const ORDERED_MARKER = /^\d{1,9}[.)]/;

/**
 * One linear pass over the lines before parsing: a document past `limits` fails with
 * RAG_DOCUMENT_TOO_COMPLEX instead of stalling the run or overflowing the stack. Nesting is counted
 * as CommonMark opens containers (https://spec.commonmark.org/0.31.2/#container-blocks), roughly:
 * `>` markers and list markers at the start of a line, and list items kept open by indentation;
 * lines inside fenced code open nothing.
 */
export function assertMarkdownWithinLimits(markdown: string, limits: MarkdownLimits = DEFAULT_MARKDOWN_LIMITS): void {
  if (markdown.length > limits.maxChars) throw tooComplex(`${markdown.length.toLocaleString('en-US')} characters of Markdown, the limit is ${limits.maxChars.toLocaleString('en-US')}: split it`);
  const openItems: number[] = [];
  let fence: string | undefined;
  let lineNumber = 0;
  for (let start = 0; start <= markdown.length; ) {
    const newline = markdown.indexOf('\n', start);
    const end = newline === -1 ? markdown.length : newline;
    lineNumber += 1;
    if (end - start > limits.maxLineChars) throw tooComplex(`line ${lineNumber} has ${(end - start).toLocaleString('en-US')} characters, the limit is ${limits.maxLineChars.toLocaleString('en-US')}`);
    const line = markdown.slice(start, end);
    const prefix = containerPrefix(line);
    const rest = line.slice(prefix.contentStart);
    const fenceMarker = FENCE.exec(rest)?.[1];
    if (fence !== undefined) {
      if (fenceMarker !== undefined && fenceMarker[0] === fence[0] && fenceMarker.length >= fence.length) fence = undefined;
    } else {
      if (rest.trim() !== '' || prefix.items.length > 0) {
        while ((openItems.at(-1) ?? -1) > prefix.indent) openItems.pop();
        openItems.push(...prefix.items);
      }
      const depth = prefix.quotes + openItems.length;
      if (depth > limits.maxNesting) throw tooComplex(`line ${lineNumber} is nested ${depth} deep (blockquotes and lists), the limit is ${limits.maxNesting}`);
      fence = fenceMarker;
    }
    start = end + 1;
  }
}

interface ContainerPrefix {
  /** Columns before the line's first marker or text. */
  indent: number;
  quotes: number;
  /** Content columns of the list items the line opens. */
  items: number[];
  /** Where the line's content starts, after its markers. */
  contentStart: number;
}

/** The `>` and list markers a line starts with (`> - 1. text`), each optionally after spaces. */
function containerPrefix(line: string): ContainerPrefix {
  const prefix: ContainerPrefix = { indent: -1, quotes: 0, items: [], contentStart: 0 };
  let position = 0;
  for (;;) {
    while (line[position] === ' ' || line[position] === '\t') position += 1;
    if (prefix.indent === -1) prefix.indent = position;
    const marker = markerAt(line, position);
    if (marker === 0) break;
    if (line[position] === '>') prefix.quotes += 1;
    else prefix.items.push(position + marker + 1);
    position += marker;
  }
  prefix.contentStart = position;
  return prefix;
}

/** Length of the blockquote or list marker at `position`, 0 when there is none. */
function markerAt(line: string, position: number): number {
  const character = line[position];
  if (character === '>') return 1;
  const length = character === '-' || character === '*' || character === '+' ? 1 : (ORDERED_MARKER.exec(line.slice(position, position + 11))?.[0].length ?? 0);
  if (length === 0) return 0;
  const after = line[position + length];
  return after === undefined || after === ' ' || after === '\t' ? length : 0;
}

function tooComplex(reason: string): RagError {
  return new RagError('RAG_DOCUMENT_TOO_COMPLEX', `(${reason})`);
}
