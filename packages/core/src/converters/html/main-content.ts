/**
 * A page's main content: where it is, and what inside it is still navigation. The rules are those of the
 * markup, not of any one site, so they hold across generators (Sphinx, DocBook, MkDocs, Javadoc, wikis):
 *
 * 1. Page chrome goes first (page-chrome.ts: scripts, controls, hidden elements, landmarks).
 * 2. The content is the page's `<main>` (or `role="main"`), else its main `<article>`, else the body
 *    narrowed down to the container that holds nearly all of its text outside links, when what it leaves
 *    out holds no heading of its own (a site banner whose title is a link, navigation bars).
 * 3. Inside it, navigation blocks go: those whose class or id names navigation (nav, menu, sidebar,
 *    breadcrumbs, header, footer, pager…) and that hold links, and blocks of links with hardly any other
 *    text (an in-page table of contents, a box of related pages). Anchors that only link a heading to
 *    itself (a "¶" permalink) go too.
 * 4. A page whose content is nearly all links is a link list (a table of contents, an index), told apart
 *    so that the ingest can apply its policy to it (link-list-pages.ts), and its links are kept.
 */
import { childElements, type Document, type Element, elementsIn, firstElementNamed } from './html-dom.ts';
import { plainText } from './inline-text.ts';
import { pageChrome } from './page-chrome.ts';
import { TextMeasure } from './text-measure.ts';

export interface MainContent {
  root: Element | Document;
  /** Elements of steps 1 and 2, never content (their descendants with them). */
  chrome: Set<Element>;
  measure: TextMeasure;
  /** The content's links and their share of its text. */
  links: number;
  linkDensity: number;
}

/** Narrowing the body stops at a container holding less than this share of the text outside links. */
const DOMINANT_SHARE = 0.9;
/** Containers the body is narrowed through; content elements (tables, lists, paragraphs) are never roots. */
const CONTAINERS = new Set(['div', 'section', 'article', 'main', 'td', 'center', 'font', 'span', 'body', 'table', 'tbody', 'tr']);
/** Block elements that may be navigation inside the content. */
const BLOCKS = new Set(['div', 'section', 'ul', 'ol', 'dl', 'table', 'p', 'td', 'tr', 'center']);
/**
 * Words of class names and ids that name navigation, as Readability reads them
 * (https://github.com/mozilla/readability, `unlikelyCandidates`): a block so named is navigation.
 */
const NAVIGATION_NAME = /(?:^|[\s_-])(?:nav\w*|\w*nav|menu\w*|sidebar|breadcrumbs?|crumbs|toc|pager|pagination|masthead|related)(?=$|[\s_-])/;
/** Header and footer are names of page chrome too, but also of a title area: only with links and no heading in it. */
const HEADER_FOOTER_NAME = /(?:^|[\s_-])\w*(?:header|footer)(?=$|[\s_-])/;
const HEADER_FOOTER_LINK_DENSITY = 0.1;
const LINK_BLOCK_MIN_LINKS = 3;
const LINK_BLOCK_DENSITY = 0.8;
/** No rule of step 3 removes a block holding this share of the content's text. */
const MAX_REMOVED_SHARE = 0.5;
const PERMALINK_TEXT = /^[\s¶§#⚓🔗]*$/u;

/** Steps 1 and 2: the content's root, with what the page holds besides it. */
export function mainContent(document: Document): MainContent {
  const chrome = pageChrome(document);
  const measure = new TextMeasure(document, chrome);
  const root = contentRoot(document, chrome, measure);
  const stats = isRoot(root) ? measure.of(root) : { links: 0, text: 0, linkText: 0 };
  return { root, chrome, measure, links: stats.links, linkDensity: stats.text === 0 ? 0 : stats.linkText / stats.text };
}

/**
 * How step 3 weighs a block: on an ordinary page; on a link list indexed without its links, where every
 * block that is mostly links goes, however much of the page it is; on a link list indexed with them,
 * where only permalinks go.
 */
export type NavigationRule = { kind: 'blocks'; maxShare: number; minLinks: number; minDensity: number } | { kind: 'permalinks' };

export const ORDINARY_PAGE: NavigationRule = { kind: 'blocks', maxShare: MAX_REMOVED_SHARE, minLinks: LINK_BLOCK_MIN_LINKS, minDensity: LINK_BLOCK_DENSITY };

/** Step 3: the navigation inside the content, by `rule`. */
export function contentNavigation({ root, chrome, measure }: MainContent, rule: NavigationRule = ORDINARY_PAGE): Set<Element> {
  const navigation = new Set<Element>();
  for (const element of elementsIn(root, (candidate) => chrome.has(candidate) || navigation.has(candidate))) {
    if (element !== root && isInContentNavigation(element, root, measure, rule)) navigation.add(element);
  }
  return navigation;
}

function isRoot(root: Element | Document): root is Element {
  return root.type !== 'root';
}

function contentRoot(document: Document, removed: Set<Element>, measure: TextMeasure): Element | Document {
  const visible = (element: Element) => !removed.has(element);
  const mains = [...elementsIn(document, (element) => removed.has(element))].filter((element) => element.name === 'main' || element.attribs.role === 'main');
  if (mains.length > 0) return largest(mains, measure);
  const body = firstElementNamed(document, 'body') ?? document;
  const bodyText = isRoot(body) ? measure.of(body).text : 0;
  const articles = [...elementsIn(body, (element) => !visible(element))].filter((element) => element.name === 'article');
  const article = articles.length > 0 ? largest(articles, measure) : undefined;
  if (article && measure.of(article).text >= bodyText / 2) return article;
  return isRoot(body) ? narrowed(body, removed, measure) : body;
}

function largest(elements: Element[], measure: TextMeasure): Element {
  return elements.reduce((best, element) => (measure.of(element).text > measure.of(best).text ? element : best));
}

/** The body narrowed to the container holding nearly all of its text outside links, step 2 above. */
function narrowed(body: Element, removed: Set<Element>, measure: TextMeasure): Element {
  const total = ownText(body, measure);
  let root = body;
  for (;;) {
    const children = childElements(root).filter((child) => !removed.has(child));
    const dominant = children.find((child) => CONTAINERS.has(child.name) && ownText(child, measure) >= DOMINANT_SHARE * total);
    if (!dominant || children.some((child) => child !== dominant && measure.of(child).headingText > 0)) return root;
    root = dominant;
  }
}

/** Text outside links. */
function ownText(element: Element, measure: TextMeasure): number {
  const { text, linkText } = measure.of(element);
  return text - linkText;
}

function isInContentNavigation(element: Element, root: Element | Document, measure: TextMeasure, rule: NavigationRule): boolean {
  if (element.name === 'a') return isPermalink(element);
  if (rule.kind === 'permalinks' || !BLOCKS.has(element.name)) return false;
  const stats = measure.of(element);
  const rootText = isRoot(root) ? measure.of(root).text : stats.text;
  if (stats.text > rule.maxShare * rootText) return false;
  const density = measure.linkDensity(element);
  const names = `${element.attribs.class ?? ''} ${idWords(element)}`.toLowerCase();
  if (NAVIGATION_NAME.test(names)) return true;
  if (stats.links > 0 && density >= HEADER_FOOTER_LINK_DENSITY && stats.headingText === 0 && HEADER_FOOTER_NAME.test(names)) return true;
  // A block of links with its own heading is a section of a link list (a table of contents' chapter), not a box of links.
  return stats.links >= rule.minLinks && density >= rule.minDensity && stats.headingText === 0;
}

/**
 * The words of an element's id that are not those of its own heading: generators write a section's id as a
 * slug of its title (docutils' `s-select-related` for "select_related()", DocBook's `RELATED-FUNCTIONS`),
 * which says what the section is about, not that it is navigation.
 */
function idWords(element: Element): string {
  const id = element.attribs.id;
  if (id === undefined || !NAVIGATION_NAME.test(id.toLowerCase()) && !HEADER_FOOTER_NAME.test(id.toLowerCase())) return id ?? '';
  const heading = firstHeading(element);
  if (!heading) return id;
  const titleWords = new Set(plainText(heading, () => false).toLowerCase().split(/[^\p{L}\p{N}]+/u));
  return id.split(/[\s_-]+/).filter((word) => !titleWords.has(word.toLowerCase())).join('-');
}

function firstHeading(element: Element): Element | undefined {
  for (const candidate of elementsIn(element)) if (/^h[1-6]$/.test(candidate.name)) return candidate;
  return undefined;
}

/** A link within the page shown as a symbol or an icon: a heading's permalink ("¶"), a "back to top" arrow. */
function isPermalink(anchor: Element): boolean {
  const href = anchor.attribs.href;
  if (href === undefined || !href.startsWith('#')) return false;
  return PERMALINK_TEXT.test(plainText(anchor, (element) => element.name === 'img'));
}
