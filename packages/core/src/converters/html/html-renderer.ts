/**
 * The main content of a page as Markdown lines and their structure, in one walk of the tree: headings
 * (levels counted from the page's highest), paragraphs, lists, tables as compact pipe tables, code as
 * fenced blocks, long definition lists as sections. Text is written as it reads: no Markdown escaping,
 * link text without its target, pictures by their alt text.
 */
import type { ConvertedDocument } from '../converter.ts';
import { definitionEntries, entriesAsSections } from './definition-lists.ts';
import { type AnyNode, type Element, elementsIn, isTag, isText } from './html-dom.ts';
import { dataTableRows, pipeTableLines, rowsOf } from './html-tables.ts';
import { codeLanguage, collapseWhitespace, imageText, isActionLink, plainText, preformattedText } from './inline-text.ts';
import { MarkdownWriter } from './markdown-writer.ts';
import type { TextMeasure } from './text-measure.ts';

const HEADING_RANK: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
const LISTS = new Set(['ul', 'ol', 'menu']);
/** Elements that start and end a block (in a list item: a line). */
const BLOCKS = new Set([
  'p', 'div', 'section', 'article', 'main', 'header', 'footer', 'blockquote', 'figure', 'figcaption', 'details', 'summary',
  'address', 'center', 'fieldset', 'legend', 'hgroup', 'li', 'dt', 'dd', 'caption', 'form', 'body', 'html', 'tr', 'td', 'th', 'tbody', 'thead', 'tfoot',
]);
/** Headings are cut at this many characters (a long signature as a term). */
const MAX_HEADING_CHARS = 300;

export class HtmlRenderer {
  private readonly writer = new MarkdownWriter();
  /** The text of the line being written, not yet collapsed. */
  private parts: string[] = [];
  /** What the next line written starts with (a list item's marker). */
  private linePrefix = '';
  private listDepth = 0;
  /** The headings open above the current position, as the chunker will see them, with the element holding each one's section. */
  private readonly openSections: Array<{ level: number; holder: Element | undefined }> = [];
  private readonly topRank: number;
  /** Elements whose end closes the sections their headings opened, with the highest level to close. */
  private readonly sectionsEndingWith = new Map<Element, number>();
  /** How many parts the line had when its last code span was written: another one right after joins it. */
  private codeSpanEnds = -1;
  /** 1 when the page's title heads the document: its own headings then sit one level under it. */
  private levelShift = 0;

  /** `title`: the page's `<title>`, its top heading when its content starts with text before any heading of its own. */
  constructor(
    private readonly root: AnyNode,
    private readonly skipped: (element: Element) => boolean,
    private readonly measure: TextMeasure,
    private readonly title = '',
  ) {
    this.topRank = highestHeadingRank(root, skipped);
  }

  render(): ConvertedDocument {
    if (this.title !== '' && startsWithText(this.root, this.skipped)) {
      this.heading(1, this.title);
      this.levelShift = 1;
    }
    this.children(this.root);
    this.endBlock();
    if (!this.writer.hasText) this.headingsAsText();
    return this.writer.toDocument();
  }

  /**
   * A page of headings and nothing else (a table of contents or an index indexed without its links) would make
   * no chunk at all, and would be converted again by every run: its headings become its one paragraph.
   */
  private headingsAsText(): void {
    const headings = this.writer.headingTexts();
    if (headings.length === 0) return;
    this.writer.sectionEnd(1);
    this.writer.line(headings.join(' · '));
  }


  private children(node: AnyNode): void {
    if ('children' in node) for (const child of node.children) this.node(child);
  }

  private node(node: AnyNode): void {
    if (isText(node)) {
      this.parts.push(node.data);
      return;
    }
    if (!isTag(node) || this.skipped(node)) return;
    this.element(node);
    const closes = this.sectionsEndingWith.get(node);
    if (closes !== undefined) this.endSections(closes);
  }

  private element(node: Element): void {
    const rank = HEADING_RANK[node.name];
    if (rank !== undefined) this.sectionHeading(node, rank - this.topRank + 1 + this.levelShift);
    else if (node.name === 'pre') this.code(node);
    else if (node.name === 'table') this.table(node);
    else if (LISTS.has(node.name)) this.list(node);
    else if (node.name === 'dl') this.definitionList(node);
    else if (node.name === 'br') this.endLine();
    else if (node.name === 'hr') this.endBlock();
    else if (node.name === 'img') this.parts.push(` ${imageText(node)} `);
    else if (node.name === 'code' || node.name === 'kbd' || node.name === 'samp') this.inlineCode(node);
    else if (BLOCKS.has(node.name)) this.block(node);
    else this.children(node);
  }

  /**
   * A heading opens a section that ends with the element holding it, as a Sphinx `div.section` or a DocBook
   * `div.sect2` holds its section: so a note's "Note" heading (DocBook writes it as an h3 in `div.note`) heads
   * the note alone, and what follows the note goes back under the heading above it. The holder is the first
   * ancestor with something after the heading (DocBook wraps a title in three divs of its own).
   */
  private sectionHeading(heading: Element, rankLevel: number): void {
    // The page's own titles (the highest level) head the rest of the page, even from a header box (AsciiDoc's
    // `div#header` holds the title and the first section).
    const holder = rankLevel > 1 ? holderOf(heading, this.skipped) : undefined;
    const scoped = holder && holder !== this.root ? holder : undefined;
    // Held inside the section of an open heading (a note within a parameter's entry), it is a subsection of
    // that heading whatever its rank: DocBook titles every note with an h3.
    const enclosing = this.openSections.findLast((section) => section.holder !== undefined && scoped !== undefined && section.holder !== scoped && contains(section.holder, scoped));
    const level = enclosing ? Math.max(rankLevel, enclosing.level + 1) : rankLevel;
    this.heading(level, this.titleText(heading), scoped);
    if (scoped) this.sectionsEndingWith.set(scoped, Math.min(level, this.sectionsEndingWith.get(scoped) ?? level));
  }

  private endSections(level: number): void {
    if (!this.openSections.some((open) => open.level >= level)) return;
    this.endBlock();
    while ((this.openSections.at(-1)?.level ?? 0) >= level) this.openSections.pop();
    this.writer.sectionEnd(level);
  }

  private block(element: Element): void {
    if (this.listDepth > 0) {
      this.endLine();
      this.children(element);
      this.endLine();
      return;
    }
    this.endBlock();
    this.children(element);
    this.endBlock();
  }

  private heading(level: number, text: string, holder?: Element): void {
    this.endBlock();
    const heading = text.length > MAX_HEADING_CHARS ? `${text.slice(0, MAX_HEADING_CHARS - 1).trimEnd()}…` : text;
    if (heading === '') return;
    while ((this.openSections.at(-1)?.level ?? 0) >= level) this.openSections.pop();
    this.openSections.push({ level, holder });
    this.writer.heading(level, heading);
  }

  /** A heading's or term's text, without the action links set beside it. */
  private titleText(element: Element): string {
    return plainText(element, (inner) => this.skipped(inner) || isActionLink(inner));
  }

  private code(pre: Element): void {
    this.endBlock();
    this.writer.code(preformattedText(pre, this.skipped), codeLanguage(pre));
  }

  private inlineCode(element: Element): void {
    const text = plainText(element, this.skipped);
    if (text === '') return;
    if (text.includes('`')) {
      this.parts.push(text);
      return;
    }
    // Code elements side by side (Sphinx writes `'django.db.models.AutoField'` as three) are one code span.
    if (this.codeSpanEnds === this.parts.length) this.parts.push(`${this.parts.pop()!.slice(0, -1)}${text}\``);
    else this.parts.push(`\`${text}\``);
    this.codeSpanEnds = this.parts.length;
  }

  private table(table: Element): void {
    this.endBlock();
    const rows = dataTableRows(table, this.skipped);
    if (!rows) {
      for (const row of rowsOf(table)) this.block(row);
      return;
    }
    if (rows.caption !== '') this.writer.line(rows.caption);
    for (const line of pipeTableLines(rows)) this.writer.line(line);
    this.endBlock();
  }

  private list(list: Element): void {
    this.endLine();
    const ordered = list.name === 'ol';
    let number = Number.parseInt(list.attribs.start ?? '1', 10) || 1;
    this.listDepth += 1;
    for (const item of list.children) {
      if (!isTag(item) || item.name !== 'li' || this.skipped(item)) {
        this.node(item);
        continue;
      }
      this.endLine();
      this.linePrefix = `${'  '.repeat(this.listDepth - 1)}${ordered ? `${number}.` : '*'} `;
      number += 1;
      this.children(item);
      this.endLine();
      this.linePrefix = '';
    }
    this.listDepth -= 1;
    if (this.listDepth === 0) this.endBlock();
  }

  private definitionList(list: Element): void {
    const entries = definitionEntries(list);
    if (this.listDepth > 0 || !entriesAsSections(list, entries, this.measure)) {
      this.block(list);
      return;
    }
    const level = (this.openSections.at(-1)?.level ?? 0) + 1;
    for (const { terms, descriptions } of entries) {
      const title = terms.map((term) => this.titleText(term)).filter((text) => text !== '').join(' / ');
      this.heading(level, title, list);
      // The term is also the first line of its entry, as the page shows it: the entry's text names its subject.
      this.writer.line(title);
      this.writer.endBlock();
      for (const description of descriptions) this.block(description);
    }
    this.endSections(level);
  }

  /** Writes the line being collected, if it has text. */
  private endLine(): void {
    const text = collapseWhitespace(this.parts.join('')).trim();
    this.parts = [];
    this.codeSpanEnds = -1;
    if (text === '') return;
    this.writer.line(`${this.linePrefix}${text}`);
    // The item's marker goes on its first line only.
    this.linePrefix = '';
  }

  private endBlock(): void {
    this.endLine();
    this.writer.endBlock();
  }
}

function contains(ancestor: Element, element: Element): boolean {
  for (let parent = element.parent; parent; parent = parent.parent) if (parent === ancestor) return true;
  return false;
}

/**
 * The first ancestor of a heading holding something after it (text, or an element that is not skipped): the
 * section the heading heads. A box ending with its title (Javadoc's `div.header`) holds nothing after it, so
 * the title heads what follows the box.
 */
function holderOf(heading: Element, skipped: (element: Element) => boolean): Element | undefined {
  let inner: Element = heading;
  for (let holder = heading.parent; holder && isTag(holder); holder = holder.parent) {
    const after = holder.children.slice(holder.children.indexOf(inner) + 1);
    if (after.some((child) => (isTag(child) ? !skipped(child) : isText(child) && child.data.trim() !== ''))) return holder;
    inner = holder;
  }
  return undefined;
}

/** Whether the first thing a reader sees in the content is text rather than a heading. */
function startsWithText(root: AnyNode, skipped: (element: Element) => boolean): boolean {
  const stack: AnyNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (isText(node)) {
      if (node.data.trim() !== '') return true;
      continue;
    }
    if (isTag(node)) {
      if (skipped(node)) continue;
      if (HEADING_RANK[node.name] !== undefined) return false;
    }
    if ('children' in node) for (let index = node.children.length - 1; index >= 0; index -= 1) stack.push(node.children[index]!);
  }
  return false;
}

function highestHeadingRank(root: AnyNode, skipped: (element: Element) => boolean): number {
  let highest = 6;
  for (const element of elementsIn(root, skipped)) {
    const rank = HEADING_RANK[element.name];
    if (rank !== undefined && rank < highest) highest = rank;
  }
  return highest;
}
