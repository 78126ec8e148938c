/**
 * RecursiveCharacterTextSplitter (langchain-text-splitters 1.1.2, defaults) re-implemented.
 *
 * Why not a library: @langchain/textsplitters measures UTF-16 units and uses JS trim(), so an
 * emoji counts 2 and U+FEFF/U+001C… strip differently; the chunks (and so the chunk ids) would
 * drift from the Python pipeline's. No other maintained package reproduces the Python behaviour.
 */

export interface SplitOptions {
  chunkSize: number;
  chunkOverlap: number;
  /**
   * A piece shorter than this (characters) is merged into its neighbour (merge-small-pieces.ts); 0 keeps the
   * Python pipeline's chunk boundaries.
   */
  minChars?: number;
}

const SEPARATORS = ['\n\n', '\n', ' ', ''] as const;

/** Python's str.isspace() set (Unicode 14), which str.strip() removes. JS trim() differs. */
const PY_WS = '\t\n\u000b\f\r\u001c\u001d\u001e\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000';

const PY_LEADING_WS = new RegExp(`^[${PY_WS}]*`, 'u');
const PY_WS_CHAR = new RegExp(`^[${PY_WS}]$`, 'u');

/** Python `str.strip()` with no argument. */
export function pythonStrip(text: string): string {
  const { start, end } = pythonStripSpan(text);
  return text.slice(start, end);
}

function pythonStripSpan(text: string): TextSpan {
  const start = PY_LEADING_WS.exec(text)?.[0].length ?? 0;
  if (start === text.length) return { start, end: start };
  let end = text.length;
  while (PY_WS_CHAR.test(text.charAt(end - 1))) end -= 1;
  return { start, end };
}

/** Python `len()`: code points, so an astral character counts 1. */
function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length += 1;
  return length;
}

/** Where a chunk lies in the split text, in UTF-16 offsets (`text.slice(start, end)`). */
export interface TextSpan {
  start: number;
  end: number;
}

interface Piece {
  start: number;
  text: string;
  length: number;
}

export function splitText(text: string, options: SplitOptions): string[] {
  return splitTextSpans(text, options).map(({ start, end }) => text.slice(start, end));
}

/** Same chunks as `splitText`, as positions, so a caller can map them onto a richer text. */
export function splitTextSpans(text: string, options: SplitOptions): TextSpan[] {
  if (options.chunkOverlap > options.chunkSize) {
    throw new RangeError(`chunkOverlap ${options.chunkOverlap} is larger than chunkSize ${options.chunkSize}`);
  }
  return splitRecursively({ start: 0, text, length: codePointLength(text) }, SEPARATORS, options);
}

function splitRecursively(whole: Piece, separators: readonly string[], options: SplitOptions): TextSpan[] {
  const index = separators.findIndex((s) => s === '' || whole.text.includes(s));
  const separator = separators[index] ?? '';
  const deeper = separator === '' ? [] : separators.slice(index + 1);
  const spans: TextSpan[] = [];
  let fitting: Piece[] = [];
  for (const piece of splitKeepingSeparator(whole, separator)) {
    if (piece.length < options.chunkSize) {
      fitting.push(piece);
      continue;
    }
    spans.push(...mergePieces(fitting, options));
    fitting = [];
    // Python appends an unsplittable piece as is, unstripped.
    const whole = { start: piece.start, end: piece.start + piece.text.length };
    spans.push(...(deeper.length === 0 ? [whole] : splitRecursively(piece, deeper, options)));
  }
  spans.push(...mergePieces(fitting, options));
  return spans.filter((span) => span.end > span.start);
}

/** keep_separator=True: the separator stays at the start of the piece that follows it. */
function splitKeepingSeparator(whole: Piece, separator: string): Piece[] {
  const parts = separator === '' ? Array.from(whole.text) : whole.text.split(separator);
  const pieces: Piece[] = [];
  let start = whole.start;
  parts.forEach((part, i) => {
    const text = i === 0 || separator === '' ? part : separator + part;
    if (text !== '') pieces.push({ start, text, length: codePointLength(text) });
    start += text.length;
  });
  return pieces;
}

/**
 * `_merge_splits` with an empty join separator (keep_separator already kept it). The window is the run of
 * pieces from `first` up to the current one: Python pops its front, which here only moves `first`, so a
 * section of a million one-character pieces costs what its length does.
 */
function mergePieces(pieces: Piece[], { chunkSize, chunkOverlap }: SplitOptions): TextSpan[] {
  const spans: TextSpan[] = [];
  let first = 0;
  let total = 0;
  pieces.forEach((piece, index) => {
    if (total + piece.length > chunkSize && index > first) {
      spans.push(spanOf(pieces.slice(first, index)));
      while (total > chunkOverlap || (total + piece.length > chunkSize && total > 0)) {
        total -= pieces[first]?.length ?? 0;
        first += 1;
      }
    }
    total += piece.length;
  });
  if (pieces.length > first) spans.push(spanOf(pieces.slice(first)));
  return spans;
}

/** The joined pieces, python-stripped; an empty span stands for a chunk Python drops. */
function spanOf(window: Piece[]): TextSpan {
  const start = window[0]?.start ?? 0;
  const stripped = pythonStripSpan(window.map((piece) => piece.text).join(''));
  return { start: start + stripped.start, end: start + stripped.end };
}
