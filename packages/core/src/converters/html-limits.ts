import { RagError } from '../errors.ts';

/**
 * Elements open at once before an HTML document is refused unparsed. The converter walks the tree
 * recursively, a stack frame or two per level (200,000 nested `<div>` would overflow the stack); real
 * pages nest a few dozen deep.
 */
export const DEFAULT_MAX_HTML_DEPTH = 256;

/** Elements that never hold children, and those whose end tag may be left out (a `<p>` closed by the next one): neither nests. https://html.spec.whatwg.org/multipage/syntax.html#void-elements */
const NOT_NESTING = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr',
  'p', 'li', 'dt', 'dd', 'tr', 'td', 'th', 'thead', 'tbody', 'tfoot', 'option', 'optgroup', 'colgroup', 'caption', 'rt', 'rp', 'html', 'head', 'body',
]);
/** Elements whose content is text, not markup: a `<div>` inside a script is not an element. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext']);
/** Sticky: read at the position after a `<`, without slicing the page. */
const TAG_NAME = /\/?([a-zA-Z][a-zA-Z0-9-]*)/y;

/** One linear pass over the tags: open elements past `maxDepth` fail with RAG_DOCUMENT_TOO_COMPLEX. */
export function assertHtmlWithinLimits(html: string, maxDepth = DEFAULT_MAX_HTML_DEPTH): void {
  let depth = 0;
  let position = html.indexOf('<');
  while (position !== -1) {
    if (html.startsWith('<!--', position)) {
      const end = html.indexOf('-->', position + 4);
      if (end === -1) return;
      position = html.indexOf('<', end + 3);
      continue;
    }
    const close = html.indexOf('>', position);
    // No `>` left: the rest is text, never a tag.
    if (close === -1) return;
    TAG_NAME.lastIndex = position + 1;
    const name = TAG_NAME.exec(html);
    let next = close + 1;
    if (name) {
      const tag = name[1]!.toLowerCase();
      const closing = name[0].startsWith('/');
      const selfClosing = html[close - 1] === '/';
      if (!closing && RAW_TEXT.has(tag)) {
        next = endOfRawText(html, tag, next);
      } else if (!NOT_NESTING.has(tag) && !selfClosing) {
        depth = Math.max(0, depth + (closing ? -1 : 1));
        if (depth > maxDepth) throw new RagError('RAG_DOCUMENT_TOO_COMPLEX', `(HTML elements nested more than ${maxDepth} deep)`);
      }
    }
    position = html.indexOf('<', next);
  }
}

/** Where the raw text of a `<script>` (or another RAW_TEXT element) started at `from` ends. */
function endOfRawText(html: string, tag: string, from: number): number {
  const closing = new RegExp(`</${tag}`, 'gi');
  closing.lastIndex = from;
  return closing.exec(html)?.index ?? html.length;
}
