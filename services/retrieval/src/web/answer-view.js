// An answer and its sources on the page: Markdown with each [source#chunk] label a link to the passage,
// and the list of citations, each with its page and a link to its document.
import { documentLink } from './document-links.js';
import { element, textNodesOf } from './dom.js';
import { markdownFragment } from './markdown.js';
import { CITATION } from './sentence-match.js';

export function citationLabel(citation) {
  return citation.source + '#' + citation.chunk_index;
}

/** A link that opens the passage of `label` (the page's click handler reads data-label). */
function passageLink(label, className, text) {
  const link = element('a', className, text);
  link.href = '#passage';
  link.dataset.label = label;
  return link;
}

/** What the server writes after a sentence no passage supports (core answer-check/unsupported-mark.ts). */
const UNSUPPORTED_MARK = '[not supported by the documents]';
const CITATION_OR_MARK = new RegExp(CITATION.source + '|' + UNSUPPORTED_MARK.replace(/[[\]]/g, '\\$&'), 'g');

/**
 * Renders the answer's Markdown into `container`, each [source#chunk] label a link that opens the passage,
 * each unsupported-sentence mark flagged.
 */
export function renderAnswer(container, text) {
  container.replaceChildren(markdownFragment(text));
  container.classList.add('markdown');
  for (const node of textNodesOf(container)) {
    const value = node.nodeValue;
    const matches = Array.from(value.matchAll(CITATION_OR_MARK));
    if (matches.length === 0) continue;
    const parts = [];
    let at = 0;
    for (const match of matches) {
      if (match.index > at) parts.push(value.slice(at, match.index));
      parts.push(match[1] === undefined ? element('span', 'unsupported', match[0]) : passageLink(match[1], 'cite', '[' + match[1] + ']'));
      at = match.index + match[0].length;
    }
    if (at < value.length) parts.push(value.slice(at));
    node.replaceWith(...parts);
  }
}

/** Lists the citations in `container`: label (opens the passage), heading, page or "open" (opens the document). */
export function renderCitations(container, citations) {
  container.replaceChildren();
  for (const citation of citations) {
    const item = element('li', 'citation');
    item.dataset.label = citationLabel(citation);
    item.append(passageLink(citationLabel(citation), 'cite label', citationLabel(citation)));
    if (citation.heading_path) item.append(' ', element('span', 'heading', citation.heading_path));
    item.append(' ', documentLink(citation));
    container.append(item);
  }
  if (citations.length === 0) container.append(element('li', 'none', 'No passage was cited.'));
}
