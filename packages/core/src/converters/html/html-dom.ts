/**
 * The HTML document as a tree (htmlparser2's DOM: fast, linear, entities decoded), and the few questions
 * the converter asks of its elements.
 */
import { type AnyNode, type Document, type Element, isTag, isText } from 'domhandler';
import { parseDocument } from 'htmlparser2';

export type { AnyNode, Document, Element };
export { isTag, isText };

export function parseHtml(html: string): Document {
  return parseDocument(html, { decodeEntities: true });
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
