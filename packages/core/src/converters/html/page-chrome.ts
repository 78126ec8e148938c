/**
 * What a page holds besides its content, by what HTML and ARIA say an element is: scripts and controls,
 * hidden elements, and the landmarks of navigation (nav, aside, the page's own header and footer,
 * role="navigation" and the like). https://html.spec.whatwg.org/multipage/sections.html#the-header-element
 * https://www.w3.org/TR/wai-aria-1.2/#landmark_roles
 */
import { attribute, type Document, type Element, elementsIn, hasAncestor } from './html-dom.ts';

/** Never text a reader sees: code, styles, embedded media, form controls. */
const NOT_TEXT = new Set([
  'script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object', 'embed', 'audio', 'video', 'map',
  'head', 'title', 'button', 'input', 'select', 'textarea', 'option', 'datalist', 'dialog',
]);
const NAVIGATION_ELEMENTS = new Set(['nav', 'aside']);
/** A header or footer is the page's own unless it lies in sectioning content (then it is an article's). */
const SECTIONING = new Set(['article', 'main', 'section']);
const PAGE_LANDMARK_ELEMENTS = new Set(['header', 'footer']);
const NAVIGATION_ROLES = new Set([
  'navigation', 'banner', 'contentinfo', 'complementary', 'search', 'menu', 'menubar', 'toolbar', 'tree', 'doc-toc', 'doc-pagelist',
]);
const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i;
/** A form with less text than this around its controls is a control (a search box), not content. */
const CONTROL_FORM_TEXT = 200;

export function isPageChrome(element: Element): boolean {
  if (NOT_TEXT.has(element.name) || isHidden(element) || NAVIGATION_ELEMENTS.has(element.name)) return true;
  const role = attribute(element, 'role')?.toLowerCase().trim();
  if (role && NAVIGATION_ROLES.has(role)) return true;
  return PAGE_LANDMARK_ELEMENTS.has(element.name) && !hasAncestor(element, SECTIONING);
}

function isHidden(element: Element): boolean {
  if (element.attribs.hidden !== undefined || attribute(element, 'aria-hidden') === 'true') return true;
  const style = attribute(element, 'style');
  return style !== undefined && HIDDEN_STYLE.test(style);
}

/** Every element of the page that is chrome, and small forms (search boxes), outermost only. */
export function pageChrome(document: Document): Set<Element> {
  const chrome = new Set<Element>();
  for (const element of elementsIn(document, (candidate) => chrome.has(candidate))) {
    if (isPageChrome(element) || (element.name === 'form' && formText(element) < CONTROL_FORM_TEXT)) chrome.add(element);
  }
  return chrome;
}

function formText(form: Element): number {
  let characters = 0;
  for (const element of elementsIn(form, isPageChrome)) {
    for (const child of element.children) if (child.type === 'text') characters += child.data.trim().length;
  }
  return characters;
}
