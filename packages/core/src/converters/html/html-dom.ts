/**
 * The HTML document as a tree (htmlparser2's DOM: fast, linear, entities decoded), and the few questions
 * the converter asks of its elements.
 */
import { type AnyNode, type Document, type Element, isTag, isText } from 'domhandler';
import { Parser } from 'htmlparser2';
import { DEFAULT_MAX_HTML_DEPTH, DepthLimitedDomHandler, HTML_PARSER_OPTIONS } from '../html-limits.ts';

export type { AnyNode, Document, Element };
export { isTag, isText };

/**
 * The page's tree, as htmlparser2's parseDocument builds it, refused (RAG_DOCUMENT_TOO_COMPLEX) once more
 * than `maxDepth` elements are open at once: the guard counts the very callbacks that build the tree.
 */
export function parseHtml(html: string, maxDepth = DEFAULT_MAX_HTML_DEPTH): Document {
  const handler = new DepthLimitedDomHandler(maxDepth);
  new Parser(handler, HTML_PARSER_OPTIONS).end(html);
  return handler.root;
}

export function childElements(node: AnyNode): Element[] {
  return 'children' in node ? node.children.filter(isTag) : [];
}

/**
 * Elements under `node` (itself included) in document order, without descending into those `skip` says
 * (asked again after the element was yielded, so the caller may mark it on the way).
 */
export function* elementsIn(node: AnyNode, skip?: (element: Element) => boolean): Generator<Element> {
  const stack: AnyNode[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (isTag(current)) {
      if (skip?.(current)) continue;
      yield current;
      if (skip?.(current)) continue;
    }
    if ('children' in current) for (let index = current.children.length - 1; index >= 0; index -= 1) stack.push(current.children[index]!);
  }
}

export function attribute(element: Element, name: string): string | undefined {
  return element.attribs[name];
}

/** The element's class names and id, lower-cased, as one string to look words up in. */
export function classAndId(element: Element): string {
  return `${element.attribs.class ?? ''} ${element.attribs.id ?? ''}`.toLowerCase();
}

export function hasAncestor(element: Element, names: ReadonlySet<string>): boolean {
  for (let parent = element.parent; parent; parent = parent.parent) if (isTag(parent) && names.has(parent.name)) return true;
  return false;
}

export function firstElementNamed(document: Document, name: string): Element | undefined {
  for (const element of elementsIn(document)) if (element.name === name) return element;
  return undefined;
}
