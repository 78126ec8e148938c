const TABLE_ROW = /^\s*\|/;
const SEPARATOR_ROW = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

/**
 * The header and separator rows of the Markdown table a chunk starts inside of, when the splitter cut
 * the table: repeated at the top of the chunk, they tell a reader (and BM25) what the columns mean.
 * `start` is the chunk's offset in its section text; undefined when the chunk does not start mid-table.
 */
export function carriedTableHeader(sectionText: string, start: number): string | undefined {
  const lineStart = sectionText.lastIndexOf('\n', start - 1) + 1;
  if (lineStart !== start || !TABLE_ROW.test(sectionText.slice(start, start + 200))) return undefined;
  const rowsAbove = sectionText.slice(0, start).split('\n').slice(0, -1);
  let first = rowsAbove.length;
  while (first > 0 && TABLE_ROW.test(rowsAbove[first - 1]!)) first -= 1;
  const [header, separator] = rowsAbove.slice(first, first + 2);
  if (header === undefined || separator === undefined || !SEPARATOR_ROW.test(separator)) return undefined;
  return `${header}\n${separator}`;
}
