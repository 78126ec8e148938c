import type { ItemBoxes, PageStart } from '../converters/converter.ts';
import type { PageBox } from '../domain.ts';
import type { LineSource } from './markdown-sections.ts';

/** Offset in the Markdown of `offset` of a section's text, through the line it falls in. */
export function sourceOffset(lineSources: readonly LineSource[], offset: number): number {
  let low = 0;
  let high = lineSources.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (lineSources[mid]!.offset <= offset) low = mid;
    else high = mid - 1;
  }
  const line = lineSources[low];
  return line === undefined ? 0 : line.source + Math.max(0, offset - line.offset);
}

/**
 * The pages the Markdown from `start` to `end` (exclusive) lies on, ascending: every page whose range
 * (its start up to the next page's) it overlaps. Text before the first page start belongs to no page.
 */
export function pagesOfSpan(pageStarts: readonly PageStart[], start: number, end: number): number[] {
  const pages: number[] = [];
  pageStarts.forEach(({ page, offset }, index) => {
    const next = pageStarts[index + 1]?.offset ?? Number.POSITIVE_INFINITY;
    if (offset < Math.max(end, start + 1) && next > start && pages.at(-1) !== page) pages.push(page);
  });
  return pages;
}

/**
 * The boxes of the items the Markdown from `start` to `end` (exclusive) holds: every item whose range (its
 * start up to the next item's) it overlaps, in order, each box once.
 */
export function boxesOfSpan(items: readonly ItemBoxes[], start: number, end: number): PageBox[] {
  const boxes = new Map<string, PageBox>();
  items.forEach(({ offset, boxes: itemBoxes }, index) => {
    const next = items[index + 1]?.offset ?? Number.POSITIVE_INFINITY;
    if (offset >= Math.max(end, start + 1) || next <= start) return;
    for (const box of itemBoxes) boxes.set(JSON.stringify(box), box);
  });
  return [...boxes.values()];
}
