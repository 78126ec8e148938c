import { DomHandler } from 'domhandler';
import { Parser, type ParserOptions } from 'htmlparser2';
import { RagError } from '../errors.ts';

/**
 * Elements open at once before an HTML document is refused. The converter walks the tree recursively, a
 * stack frame or two per level (20,000 nested `<div>` overflow the stack); real pages nest a few dozen
 * deep.
 */
export const DEFAULT_MAX_HTML_DEPTH = 256;

/**
 * The options of every parse of a page: the DOM build's (html/html-dom.ts) and the guard's below, so
 * that the guard sees exactly the elements the tree will hold. In HTML (not XML) mode the parser ignores
 * the slash of `<div/>` (it opens a div, as in a browser) but closes `<path/>` inside SVG or MathML,
 * closes void elements at once and optional end tags where it infers them (a `<p>` by the next one).
 */
export const HTML_PARSER_OPTIONS: ParserOptions = { decodeEntities: true };

/** Counts the elements open on htmlparser2's own token stream: one per `onopentag`, minus one per `onclosetag`. */
class DepthCounter {
  private depth = 0;

  constructor(private readonly maxDepth: number) {}

  open(): void {
    this.depth += 1;
    if (this.depth > this.maxDepth) throw new RagError('RAG_DOCUMENT_TOO_COMPLEX', `(HTML elements nested more than ${this.maxDepth} deep)`);
  }

  close(): void {
    this.depth -= 1;
  }
}

/**
 * htmlparser2's DOM builder, refusing the page (RAG_DOCUMENT_TOO_COMPLEX) as soon as it holds more than
 * `maxDepth` elements open: the depth is that of the tree being built, so no walk of the tree can recurse
 * deeper, and a hostile page is refused before the rest of it is built.
 */
export class DepthLimitedDomHandler extends DomHandler {
  private readonly counter: DepthCounter;

  constructor(maxDepth = DEFAULT_MAX_HTML_DEPTH) {
    super(undefined, HTML_PARSER_OPTIONS);
    this.counter = new DepthCounter(maxDepth);
  }

  override onopentag(name: string, attribs: Record<string, string>): void {
    this.counter.open();
    super.onopentag(name, attribs);
  }

  override onclosetag(): void {
    this.counter.close();
    super.onclosetag();
  }
}

/**
 * One linear pass of the parser over the page, building nothing: elements open past `maxDepth` fail with
 * RAG_DOCUMENT_TOO_COMPLEX. The converter need not call it, as its DOM build (DepthLimitedDomHandler)
 * counts the same callbacks; it answers for a page without building its tree.
 */
export function assertHtmlWithinLimits(html: string, maxDepth = DEFAULT_MAX_HTML_DEPTH): void {
  const counter = new DepthCounter(maxDepth);
  new Parser({ onopentag: () => counter.open(), onclosetag: () => counter.close() }, HTML_PARSER_OPTIONS).end(html);
}
