import type { ItemBoxes, ConvertedDocument, PageStart } from './converter.ts';
import { boxesOf, type DoclingProvenance } from './docling-boxes.ts';

/**
 * What docling-serve is asked to write between pages (`md_page_break_placeholder`, in docling-serve's
 * options: docling/datamodel/service/options.py): an HTML comment no document text produces, taken out here.
 */
export const PAGE_BREAK_PLACEHOLDER = '<!-- rag-page-break -->';
const PAGE_BREAK = /\n*<!-- rag-page-break -->\n*/g;
/** What a picture becomes with `image_export_mode=placeholder` (docling_core's MarkdownParams.image_placeholder). */
const IMAGE_PLACEHOLDER = '<!-- image -->';
/** Shorter item texts ("1", "-") would be found too early in the Markdown. */
const MIN_KEY_LENGTH = 3;
const KEY_LENGTH = 40;

/** The slice of a DoclingDocument (docling-serve's `json_content`) read here. */
interface DoclingNode {
  self_ref?: string;
  text?: unknown;
  prov?: DoclingProvenance[] | null;
  content_layer?: unknown;
  /** RefItems: `{"$ref": "#/texts/3"}` as docling-serve sends them (docling_core's RefItem, `cref` aliased `$ref`). */
  children?: Array<{ $ref?: unknown; cref?: unknown }> | null;
  data?: { table_cells?: Array<{ text?: unknown }> | null } | null;
}

/**
 * The Markdown without its page-break placeholders, and where each page starts: at the line of the first
 * item of the body (a paragraph, heading, list item, table, picture) docling found on it, items being read in
 * the document's order (`body` and its groups, as docling_core's `iterate_items` does) from the JSON's
 * `prov[0].page_no` and located in the Markdown one after the other. Each located item also brings its
 * boxes (`prov[].bbox`), held from its start up to the next located item's.
 *
 * The placeholders alone do not place pages: docling writes a break when it reaches the first item of a
 * later page (docling_core/transforms/serializer/common.py, `_iterate_items`), but a group's items are
 * written with the group, before that break, so in a PPTX, whose slides are groups, each break stands after
 * the slide it should precede; and a break names no page. They serve only when the JSON is missing.
 */
export function placePages(markdownWithBreaks: string, document: unknown): ConvertedDocument {
  const { markdown, breaks } = removeBreaks(markdownWithBreaks);
  const located = locateItems(markdown, document);
  if (located.length > 0) return { markdown, pages: pageStarts(located), ...itemBoxes(located) };
  return { markdown, pages: [0, ...breaks].map((offset, index) => ({ page: index + 1, offset })) };
}

/** The markdown without any page-break placeholder (a document whose type has no pages). */
export function withoutPageBreaks(markdown: string): string {
  return removeBreaks(markdown).markdown;
}

function removeBreaks(markdownWithBreaks: string): { markdown: string; breaks: number[] } {
  let markdown = '';
  let copied = 0;
  const breaks: number[] = [];
  for (const match of markdownWithBreaks.matchAll(PAGE_BREAK)) {
    markdown += `${markdownWithBreaks.slice(copied, match.index)}\n\n`;
    copied = match.index + match[0].length;
    breaks.push(markdown.length);
  }
  markdown += markdownWithBreaks.slice(copied);
  // A break at the very end starts no page.
  return { markdown, breaks: breaks.filter((offset) => offset < markdown.trimEnd().length) };
}

/** A page starts at the first item on a page beyond every one before it; the first page at the top. */
function pageStarts(located: Array<{ page: number; offset: number }>): PageStart[] {
  const starts: PageStart[] = [];
  for (const { page, offset } of located) {
    if (page > (starts.at(-1)?.page ?? 0)) starts.push({ page, offset: starts.length === 0 ? 0 : offset });
  }
  return starts;
}

/** Every located item's boxes ([] for none, still ending the item before it); absent when no item has any. */
function itemBoxes(located: readonly LocatedItem[]): { boxes?: ItemBoxes[] } {
  const boxes = located.map(({ offset, item }) => ({ offset, boxes: boxesOf(item.prov) }));
  return boxes.some((entry) => entry.boxes.length > 0) ? { boxes } : {};
}

interface LocatedItem {
  page: number;
  offset: number;
  item: DoclingNode;
}

/** Each body item with a page, in reading order, at the start of the line where its text was found. */
function locateItems(markdown: string, document: unknown): LocatedItem[] {
  const located: LocatedItem[] = [];
  let cursor = 0;
  for (const item of bodyItems(document)) {
    const page = item.prov?.[0]?.page_no;
    const found = Number.isInteger(page) && (page as number) >= 1 ? findItem(markdown, item, cursor) : -1;
    if (found < 0) continue;
    located.push({ page: page as number, offset: markdown.lastIndexOf('\n', found) + 1, item });
    cursor = found + 1;
  }
  return located;
}

/** Where the item's text (its first words; a table's first cell) is written, from `cursor` on; -1 when not found. */
function findItem(markdown: string, item: DoclingNode, cursor: number): number {
  const ref = item.self_ref ?? '';
  const text = ref.startsWith('#/pictures/') ? IMAGE_PLACEHOLDER : ref.startsWith('#/tables/') ? firstCellText(item) : typeof item.text === 'string' ? item.text : '';
  const key = (text.split('\n')[0] ?? '').trim().slice(0, KEY_LENGTH);
  if (key.length < MIN_KEY_LENGTH) return -1;
  // docling's Markdown escapes underscores outside code (MarkdownTextSerializer._escape_underscores).
  const escaped = markdown.indexOf(key.replace(/(?<!\\)_/g, '\\_'), cursor);
  return escaped >= 0 ? escaped : markdown.indexOf(key, cursor);
}

function firstCellText(table: DoclingNode): string {
  const cell = (table.data?.table_cells ?? []).find((candidate) => typeof candidate.text === 'string' && candidate.text.trim() !== '');
  return typeof cell?.text === 'string' ? cell.text : '';
}

/**
 * The items of the body layer (the only one the Markdown export writes, DEFAULT_CONTENT_LAYERS) in document
 * order: `body`'s children depth first through groups; a picture's children are not written (traverse_pictures
 * is off) and are skipped.
 */
function bodyItems(document: unknown): DoclingNode[] {
  if (typeof document !== 'object' || document === null) return [];
  const root = document as Record<string, unknown>;
  const items: DoclingNode[] = [];
  const visit = (node: DoclingNode, depth: number): void => {
    for (const child of node.children ?? []) {
      const resolved = resolve(root, child.$ref ?? child.cref);
      if (!resolved || depth > 64) continue;
      if ((resolved.content_layer ?? 'body') !== 'body') continue;
      if (resolved.self_ref?.startsWith('#/groups/')) visit(resolved, depth + 1);
      else {
        items.push(resolved);
        if (!resolved.self_ref?.startsWith('#/pictures/')) visit(resolved, depth + 1);
      }
    }
  };
  const body = root.body;
  if (typeof body === 'object' && body !== null) visit(body as DoclingNode, 0);
  return items;
}

/** `#/texts/3` → document.texts[3]. */
function resolve(root: Record<string, unknown>, cref: unknown): DoclingNode | undefined {
  const match = typeof cref === 'string' ? /^#\/(\w+)\/(\d+)$/.exec(cref) : null;
  if (!match) return undefined;
  const list = root[match[1]!];
  const node = Array.isArray(list) ? (list[Number(match[2])] as unknown) : undefined;
  return typeof node === 'object' && node !== null ? (node as DoclingNode) : undefined;
}
