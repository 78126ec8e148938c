import { type AnyNode, type Element, isTag, isText } from './html-dom.ts';

/**
 * HTML whitespace collapses to one space; no-break and other Unicode spaces too (chunk text is for search
 * and citations, where they would only glue words together once the chunker drops non-printing characters).
 */
const COLLAPSIBLE = /\s+/g;

export function collapseWhitespace(text: string): string {
  return text.replace(COLLAPSIBLE, ' ');
}

/** The text of an element as a reader sees it on one line: its text nodes, collapsed, without `skipped` elements. */
export function plainText(node: AnyNode, skipped: (element: Element) => boolean): string {
  const parts: string[] = [];
  collect(node, skipped, parts);
  return collapseWhitespace(parts.join('')).trim();
}

function collect(node: AnyNode, skipped: (element: Element) => boolean, parts: string[]): void {
  if (isText(node)) {
    parts.push(node.data);
    return;
  }
  if (isTag(node)) {
    if (skipped(node)) return;
    if (node.name === 'br') parts.push(' ');
    if (node.name === 'img') parts.push(` ${imageText(node)} `);
  }
  if ('children' in node) for (const child of node.children) collect(child, skipped, parts);
}

/** Pictures have no text to search; an alt text that says something (not a file name) stands for them. */
export function imageText(image: Element): string {
  const alt = collapseWhitespace(image.attribs.alt ?? '').trim();
  return /\p{L}/u.test(alt) && !/^[\w./-]+\.(?:png|jpe?g|gif|svg|webp|bmp)$/i.test(alt) ? alt : '';
}

/** A `<pre>`'s text, its lines as written; the newline right after the start tag is not content (HTML's rule). */
export function preformattedText(pre: Element, skipped: (element: Element) => boolean): string {
  const parts: string[] = [];
  collectPreformatted(pre, skipped, parts);
  return parts.join('').replace(/^\r?\n/, '').replace(/\r\n?/g, '\n');
}

function collectPreformatted(node: AnyNode, skipped: (element: Element) => boolean, parts: string[]): void {
  if (isText(node)) {
    parts.push(node.data);
    return;
  }
  if (isTag(node)) {
    if (skipped(node)) return;
    if (node.name === 'br') {
      parts.push('\n');
      return;
    }
  }
  if ('children' in node) for (const child of node.children) collectPreformatted(child, skipped, parts);
}

const LANGUAGE_CLASS = /(?:^|\s)(?:language|lang|highlight)-([\w+#.-]+)/i;
const NO_LANGUAGE = new Set(['default', 'none', 'text', 'plain', 'plaintext', 'nohighlight']);

/** The code's language from the class names highlighters put on the `<pre>` or its two parents (`language-js`, `highlight-python3`). */
export function codeLanguage(pre: Element): string {
  let element: Element | null = pre;
  for (let depth = 0; element && depth < 3; depth += 1) {
    const language = LANGUAGE_CLASS.exec(element.attribs.class ?? '')?.[1]?.toLowerCase();
    if (language && !NO_LANGUAGE.has(language)) return language;
    const code = depth === 0 ? element.children.find((child): child is Element => isTag(child) && child.name === 'code') : undefined;
    const inner = code && LANGUAGE_CLASS.exec(code.attribs.class ?? '')?.[1]?.toLowerCase();
    if (inner && !NO_LANGUAGE.has(inner)) return inner;
    element = element.parent && isTag(element.parent) ? element.parent : null;
  }
  return '';
}

const BRACKETED = /^\[[^\]]{1,30}\]$/;

/** A link in a heading or term that is an action, not part of the title: "[source]", "[edit]". */
export function isActionLink(element: Element): boolean {
  return element.name === 'a' && BRACKETED.test(plainText(element, () => false));
}
