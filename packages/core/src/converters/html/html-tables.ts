import { childElements, type Element, elementsIn } from './html-dom.ts';
import { plainText } from './inline-text.ts';

/** A table's rows as text: cells on one line each, and whether the first row heads the columns. */
export interface TableRows {
  caption: string;
  rows: string[][];
  header: boolean;
}

/** Cell content that makes a table a layout (a page built in a table, a cell holding a list or code). */
const BLOCK_CONTENT = new Set(['table', 'pre', 'ul', 'ol', 'dl', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'form']);

/** The rows of a data table, or undefined for a layout table, whose cells are rendered as blocks instead. */
export function dataTableRows(table: Element, skipped: (element: Element) => boolean): TableRows | undefined {
  const rows = rowsOf(table);
  const cells = rows.map((row) => childElements(row).filter((cell) => (cell.name === 'td' || cell.name === 'th') && !skipped(cell)));
  if (Math.max(0, ...cells.map((row) => row.length)) < 2) return undefined;
  for (const row of cells) for (const cell of row) if (holdsBlocks(cell, skipped)) return undefined;
  const texts = cells.map((row) => row.map((cell) => plainText(cell, skipped)));
  const kept = texts.map((row, index) => ({ row, index })).filter(({ row }) => row.some((cell) => cell !== ''));
  const first = kept[0];
  const header = first !== undefined && (cells[first.index]!.every((cell) => cell.name === 'th') || rows[first.index]!.parent?.type === 'tag' && (rows[first.index]!.parent as Element).name === 'thead');
  const captionElement = childElements(table).find((child) => child.name === 'caption');
  return { caption: captionElement ? plainText(captionElement, skipped) : '', rows: kept.map(({ row }) => row), header };
}

/** The table's own rows (`tr` directly or in its sections), not those of tables nested in its cells. */
export function rowsOf(table: Element): Element[] {
  const rows: Element[] = [];
  for (const child of childElements(table)) {
    if (child.name === 'tr') rows.push(child);
    else if (child.name === 'thead' || child.name === 'tbody' || child.name === 'tfoot') rows.push(...childElements(child).filter((row) => row.name === 'tr'));
  }
  return rows;
}

function holdsBlocks(cell: Element, skipped: (element: Element) => boolean): boolean {
  for (const element of elementsIn(cell, skipped)) if (element !== cell && BLOCK_CONTENT.has(element.name)) return true;
  return false;
}

/** A pipe table without padding: `| a | b |`, a separator row under the header row when there is one. */
export function pipeTableLines({ rows, header }: TableRows): string[] {
  const columns = Math.max(...rows.map((row) => row.length));
  const line = (row: string[]) => `| ${[...row, ...Array<string>(columns - row.length).fill('')].join(' | ')} |`;
  const lines = rows.map(line);
  if (header) lines.splice(1, 0, `|${' --- |'.repeat(columns)}`);
  return lines;
}
