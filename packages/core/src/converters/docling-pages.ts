import type { PagedMarkdown } from './converter.ts';

/**
 * What docling-serve is asked to write between pages (`md_page_break_placeholder`, in docling-serve's
 * options: docling/datamodel/service/options.py): an HTML comment no document text produces, taken out here.
 */
export const PAGE_BREAK_PLACEHOLDER = '<!-- rag-page-break -->';
const PAGE_BREAK = /\n*<!-- rag-page-break -->\n*/g;

/** The slice of a DoclingDocument (docling-serve's `json_content`) read here: each item's provenance and layer. */
interface DoclingItem {
  prov?: Array<{ page_no?: unknown }> | null;
  content_layer?: unknown;
  parent?: { cref?: unknown } | null;
}

const ITEM_LISTS = ['texts', 'tables', 'pictures', 'key_value_items', 'form_items'] as const;

/**
 * The Markdown without its page-break placeholders, and where each page starts.
 *
 * docling-core's Markdown serializer writes a break each time an item of the body starts on a page beyond
 * the last one seen (docling_core/transforms/serializer/common.py, `_iterate_items`): the break names no
 * page, and a page without any item (a blank page) gets none. The segments between breaks are therefore
 * numbered with the pages that hold body items, ascending, read from the document's JSON; when the counts
 * disagree (a reading order going back a page) they are numbered on from the first such page.
 */
export function placePages(markdownWithBreaks: string, document: unknown): PagedMarkdown {
  let markdown = '';
  let copied = 0;
  const starts = [0];
  for (const match of markdownWithBreaks.matchAll(PAGE_BREAK)) {
    markdown += `${markdownWithBreaks.slice(copied, match.index)}\n\n`;
    copied = match.index + match[0].length;
    starts.push(markdown.length);
  }
  markdown += markdownWithBreaks.slice(copied);
  const bodyPages = pagesWithBodyItems(document);
  const numbered = bodyPages.length === starts.length ? bodyPages : starts.map((_, index) => (bodyPages[0] ?? 1) + index);
  return { markdown, pages: starts.map((offset, index) => ({ page: numbered[index]!, offset })) };
}

/** The markdown without any page-break placeholder (a document whose type has no pages). */
export function withoutPageBreaks(markdown: string): string {
  return markdown.replace(PAGE_BREAK, '\n\n');
}

/**
 * Pages (`prov[0].page_no`, 1-based: a PDF page, a PPTX slide) that hold an item of the body layer, the
 * only layer the Markdown export writes (DEFAULT_CONTENT_LAYERS), ascending. Items inside pictures are
 * not serialized (traverse_pictures is off), so their pages do not count.
 */
function pagesWithBodyItems(document: unknown): number[] {
  if (typeof document !== 'object' || document === null) return [];
  const pages = new Set<number>();
  for (const list of ITEM_LISTS) {
    const items = (document as Record<string, unknown>)[list];
    if (!Array.isArray(items)) continue;
    for (const item of items as DoclingItem[]) {
      const page = item?.prov?.[0]?.page_no;
      const layer = item?.content_layer ?? 'body';
      const inPicture = typeof item?.parent?.cref === 'string' && item.parent.cref.startsWith('#/pictures/');
      if (Number.isInteger(page) && (page as number) >= 1 && layer === 'body' && !inPicture) pages.add(page as number);
    }
  }
  return [...pages].sort((a, b) => a - b);
}
