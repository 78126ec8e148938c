import type { PageBox } from '../domain.ts';

/** A piece of a document before it becomes a chunk: its section's heading path and its text. */
export interface ChunkPiece {
  headingPath: string;
  text: string;
  pages?: readonly number[] | undefined;
  boxes?: readonly PageBox[] | undefined;
}

const HEADING_SEPARATOR = ' > ';
const MIN_OVERLAP = 16;

/**
 * Merges pieces too small to answer anything into their neighbours, so a section that is only a heading (an API
 * signature whose description follows it, a sub-heading over one line) stops being a chunk of its own. BM25's
 * length normalisation ranks such a chunk above the long one that answers, since both hold the term once.
 *
 * A piece under `minChars` that ends a longer section joins that section's previous piece (the overlap the
 * splitter repeated is not repeated again). Any other small piece is joined with the next piece under the heading
 * path the two share, the headings it drops leading their text; at the end of the document, it follows the
 * previous piece, under that piece's heading path. Only a piece under `minChars` is ever joined, so no joined piece outgrows its largest
 * part by more than `minChars`.
 */
export function mergeSmallPieces(pieces: readonly ChunkPiece[], minChars: number): ChunkPiece[] {
  const merged: ChunkPiece[] = [];
  let pending: ChunkPiece | undefined;
  for (const piece of pieces) {
    const current = pending ? joinPieces(pending, piece) : piece;
    pending = undefined;
    const previous = merged.at(-1);
    if (current.text.length >= minChars) merged.push(current);
    else if (previous && previous.headingPath === current.headingPath) merged[merged.length - 1] = appendTail(previous, current);
    else pending = current;
  }
  const previous = merged.at(-1);
  if (pending && previous) merged[merged.length - 1] = appendPiece(previous, pending);
  else if (pending) merged.push(pending);
  return merged;
}

/** The last piece of a section after the piece before it, without the overlap the splitter put at its start. */
function appendTail(piece: ChunkPiece, tail: ChunkPiece): ChunkPiece {
  let overlap = Math.min(piece.text.length, tail.text.length);
  while (overlap > 0 && !piece.text.endsWith(tail.text.slice(0, overlap))) overlap--;
  // A few characters in common are a coincidence ("the"), not the splitter's overlap.
  if (overlap < MIN_OVERLAP) overlap = 0;
  const rest = tail.text.slice(overlap);
  const separator = overlap > 0 ? '' : '\n\n';
  return { ...piece, text: rest.trim() === '' ? piece.text : piece.text + separator + rest, ...mergedLocations(piece, tail) };
}

/** A small piece at the document's end after the piece before it, which keeps its heading path. */
function appendPiece(piece: ChunkPiece, small: ChunkPiece): ChunkPiece {
  const shared = sharedHeadings(piece.headingPath, small.headingPath);
  return { headingPath: piece.headingPath, text: `${piece.text}\n\n${withDroppedHeadings(small, shared)}`, ...mergedLocations(piece, small) };
}

function joinPieces(first: ChunkPiece, second: ChunkPiece): ChunkPiece {
  const shared = sharedHeadings(first.headingPath, second.headingPath);
  const text = [withDroppedHeadings(first, shared), withDroppedHeadings(second, shared)].join('\n\n');
  return { headingPath: shared.join(HEADING_SEPARATOR), text, ...mergedLocations(first, second) };
}

function mergedLocations(first: ChunkPiece, second: ChunkPiece): Pick<ChunkPiece, 'pages' | 'boxes'> {
  const pages = first.pages || second.pages ? [...new Set([...(first.pages ?? []), ...(second.pages ?? [])])].sort((a, b) => a - b) : undefined;
  const boxes = first.boxes || second.boxes ? [...(first.boxes ?? []), ...(second.boxes ?? [])] : undefined;
  return { pages, boxes };
}

function sharedHeadings(a: string, b: string): string[] {
  const first = headingsOf(a);
  const second = headingsOf(b);
  let count = 0;
  while (count < first.length && count < second.length && first[count] === second[count]) count++;
  return first.slice(0, count);
}

function headingsOf(path: string): string[] {
  return path === '' ? [] : path.split(HEADING_SEPARATOR);
}

/** The piece's text, led by the headings of its path below `shared` unless the text already starts with them. */
function withDroppedHeadings(piece: ChunkPiece, shared: readonly string[]): string {
  const dropped = headingsOf(piece.headingPath).slice(shared.length);
  const lines = dropped.filter((heading) => !piece.text.trimStart().startsWith(heading));
  return lines.length === 0 ? piece.text : `${lines.join('\n')}\n\n${piece.text}`;
}
