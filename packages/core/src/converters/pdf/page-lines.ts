/**
 * A PDF page's text as lines, from pdf.js's getTextContent items: each item's `str`, a line ending where pdf.js
 * marks `hasEOL`. Each line keeps its font size (the item `height`, device space) and baseline (`transform[5]`),
 * which heading and running-head detection read.
 * https://github.com/mozilla/pdf.js/blob/master/src/display/api.js (TextItem: str, transform, height, hasEOL)
 */

/** The slice of pdf.js's TextItem this reads. */
export interface TextItemLike {
  str: string;
  height?: number;
  transform?: number[];
  hasEOL?: boolean;
}

export interface TextLine {
  /** Whitespace collapsed, trimmed; never empty. */
  text: string;
  /** The smallest font size among the line's visible items: a body line holding one large symbol stays body-sized. */
  size: number;
  /** The baseline of the line's first visible item; PDF space grows upwards, so a lower line has a smaller y. */
  y: number;
}

/** pdf.js's TextMarkedContent: a marked-content boundary among the items, without text. */
interface MarkedContent {
  type: string;
}

export function linesOfPage(items: readonly (TextItemLike | MarkedContent)[]): TextLine[] {
  const lines: TextLine[] = [];
  let text = '';
  let size = Number.POSITIVE_INFINITY;
  let y: number | undefined;
  const endLine = (): void => {
    const collapsed = text.replace(/\s+/g, ' ').trim();
    if (collapsed !== '' && y !== undefined) lines.push({ text: collapsed, size: Number.isFinite(size) ? size : 0, y });
    text = '';
    size = Number.POSITIVE_INFINITY;
    y = undefined;
  };
  for (const item of items) {
    if (!('str' in item)) continue;
    text += item.str;
    if (item.str.trim() !== '' && (item.height ?? 0) > 0) {
      size = Math.min(size, item.height ?? 0);
      y ??= item.transform?.[5] ?? 0;
    }
    if (item.hasEOL) endLine();
  }
  endLine();
  return lines;
}
