import { RagError } from '../errors.ts';
import type { Converter, ConvertedDocument } from './converter.ts';
import { type Document, type Element, firstElementNamed, parseHtml } from './html/html-dom.ts';
import { plainText } from './html/inline-text.ts';
import { HtmlRenderer } from './html/html-renderer.ts';
import { isLinkListPage, LIGHT_LIST_LINK_DENSITY, type LinkPagesPolicy } from './html/link-list-pages.ts';
import { contentNavigation, mainContent, type MainContent, type NavigationRule, ORDINARY_PAGE } from './html/main-content.ts';
import { decodeText } from './text-content.ts';

export interface HtmlOptions {
  /** What a page of links (a table of contents, an index) is indexed with (INGEST_LINK_PAGES); default light. */
  linkPages?: LinkPagesPolicy;
  /**
   * Look for the page's main content and leave its navigation out (default); false for HTML that is all
   * content (a Word document's, from mammoth).
   */
  mainContentOnly?: boolean;
  /**
   * Pages larger than this many bytes are refused before their tree is built (RAG_DOCUMENT_TOO_COMPLEX): the
   * tree takes some 16 to 25 times the page's size in heap (INGEST_MAX_HTML_BYTES; default none).
   */
  maxBytes?: number | undefined;
}

/**
 * The largest page whose tree fits a heap of `heapMb` MiB: htmlparser2's DOM and the conversion's walks took
 * 12 to 21 MiB of heap a MB of page (Django's and PostgreSQL's manual pages, repeated to 5 to 20 MB), so a
 * 32nd of the heap leaves room for denser markup. A 1,024 MiB heap takes pages up to 33 MB; the audit's
 * 44 MB pages, which ran each worker out of its heap after 18 s, are refused before they are parsed.
 */
export function maxHtmlBytesForHeap(heapMb: number): number {
  return Math.floor((heapMb * 1024 * 1024) / 32);
}

/**
 * HTML as the chunker needs it: the page's main content (html/main-content.ts), as Markdown lines with
 * their structure (html/html-renderer.ts), in time linear in the page's size. HTML nested too deep is
 * refused while its tree is built, before any walk of it (RAG_DOCUMENT_TOO_COMPLEX, see html-limits.ts).
 */
export function htmlToDocument(html: string, options: HtmlOptions = {}): ConvertedDocument {
  const document = parseHtml(html);
  const content = mainContent(document);
  if (options.mainContentOnly === false) return render(document, content.chrome, new Set(), content);
  const linkList = isLinkListPage(content);
  const light = (options.linkPages ?? 'light') === 'light';
  const navigation = contentNavigation(content, linkList ? linkListRule(light) : ORDINARY_PAGE);
  const converted = render(content.root, content.chrome, navigation, content, pageTitle(document));
  return linkList ? { ...converted, linkList: { links: content.links, indexedLightly: light } } : converted;
}

function linkListRule(light: boolean): NavigationRule {
  return light ? { kind: 'blocks', maxShare: 1, minLinks: 1, minDensity: LIGHT_LIST_LINK_DENSITY } : { kind: 'permalinks' };
}

function render(root: Document | Element, chrome: Set<Element>, navigation: Set<Element>, content: MainContent, title = ''): ConvertedDocument {
  const skipped = (element: Element) => chrome.has(element) || navigation.has(element);
  return new HtmlRenderer(root, skipped, content.measure, title).render();
}

/** The `<title>` of the page, collapsed; empty when it has none. */
function pageTitle(document: Document): string {
  const title = firstElementNamed(document, 'title');
  return title ? plainText(title, () => false) : '';
}

/** The Markdown of an HTML fragment or page, all of it content (what DOCX conversion goes through). */
export function htmlToMarkdown(html: string): string {
  return htmlToDocument(html, { mainContentOnly: false }).markdown;
}

export class HtmlConverter implements Converter {
  readonly extensions = ['html', 'htm'] as const;
  readonly offThread = true;

  constructor(private readonly options: HtmlOptions = {}) {}

  async toMarkdown(bytes: Buffer): Promise<string> {
    return (await this.toPagedMarkdown(bytes)).markdown;
  }

  async toPagedMarkdown(bytes: Buffer): Promise<ConvertedDocument> {
    const { maxBytes } = this.options;
    if (maxBytes !== undefined && bytes.length > maxBytes) {
      throw new RagError('RAG_DOCUMENT_TOO_COMPLEX', `(an HTML page of ${megabytes(bytes.length)}, past INGEST_MAX_HTML_BYTES: ${megabytes(maxBytes)}; its tree would not fit the conversion's heap)`);
    }
    return htmlToDocument(decodeText(bytes, 'HTML'), this.options);
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
