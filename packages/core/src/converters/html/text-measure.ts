import { type AnyNode, type Element, isTag, isText } from './html-dom.ts';

/** How much text an element holds, and how much of it is link text: what tells content from navigation. */
export interface TextStats {
  /** Characters of text, whitespace not counted. */
  text: number;
  /** Of those, characters inside links (`<a href>`). */
  linkText: number;
  links: number;
  /** Characters of heading text (h1–h6) outside links. */
  headingText: number;
}

const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/** The text statistics of every element under a root, measured once, bottom up, leaving out removed elements. */
export class TextMeasure {
  private readonly stats = new Map<Element, TextStats>();

  constructor(root: AnyNode, private readonly removed: ReadonlySet<Element>) {
    this.measure(root, false, false);
  }

  of(element: Element): TextStats {
    return this.stats.get(element) ?? { text: 0, linkText: 0, links: 0, headingText: 0 };
  }

  /** Share of the element's text that is link text (0 for an element without text). */
  linkDensity(element: Element): number {
    const { text, linkText } = this.of(element);
    return text === 0 ? 0 : linkText / text;
  }

  private measure(node: AnyNode, inLink: boolean, inHeading: boolean): TextStats {
    if (isText(node)) {
      const text = nonSpaceCharacters(node.data);
      return { text, linkText: inLink ? text : 0, links: 0, headingText: inHeading && !inLink ? text : 0 };
    }
    const total: TextStats = { text: 0, linkText: 0, links: 0, headingText: 0 };
    if (isTag(node) && this.removed.has(node)) return total;
    const link = isTag(node) && node.name === 'a' && node.attribs.href !== undefined;
    const heading = isTag(node) && HEADINGS.has(node.name);
    if ('children' in node) {
      for (const child of node.children) {
        const stats = this.measure(child, inLink || link, inHeading || heading);
        total.text += stats.text;
        total.linkText += stats.linkText;
        total.links += stats.links;
        total.headingText += stats.headingText;
      }
    }
    if (link) total.links += 1;
    if (isTag(node)) this.stats.set(node, total);
    return total;
  }
}

/** Characters other than ASCII whitespace and no-break spaces, counted without allocating (pages hold millions of text nodes). */
function nonSpaceCharacters(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code > 32 && code !== 160) count += 1;
  }
  return count;
}
