// Marks in rendered text: the query's terms in search results, the cited sentence in a passage.
import { element, textNodesOf } from './dom.js';
import { citedSentenceIndices, sentenceRanges } from './sentence-match.js';

/** The query's words of two letters or more, lower-cased, for highlighting. */
export function queryTerms(query) {
  const words = query.toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) || [];
  return Array.from(new Set(words));
}

/** Wraps each occurrence of a term (at a word start) in the text under `root` in <mark>. */
export function markTerms(root, terms) {
  if (terms.length === 0) return;
  const escaped = terms.map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = new RegExp('(?<![\\p{L}\\p{N}_])(' + escaped.join('|') + ')', 'giu');
  for (const node of textNodesOf(root)) {
    const text = node.nodeValue;
    const parts = [];
    let at = 0;
    for (const match of text.matchAll(pattern)) {
      if (match.index > at) parts.push(text.slice(at, match.index));
      parts.push(element('mark', '', match[0]));
      at = match.index + match[0].length;
    }
    if (parts.length === 0) continue;
    if (at < text.length) parts.push(text.slice(at));
    node.replaceWith(...parts);
  }
}

// Sentences never cross these: a sentence is looked for within one paragraph, item, cell or heading.
const BLOCKS = 'p, li, td, th, h1, h2, h3, h4, h5, h6, pre, dt, dd, blockquote';

/** The text under `root` by block: [{text, nodes: [{node, start}]}]. */
function textBlocks(root) {
  const blocks = new Map();
  for (const node of textNodesOf(root)) {
    const block = (node.parentElement && node.parentElement.closest(BLOCKS)) || root;
    const entry = blocks.get(block) || { text: '', nodes: [] };
    // A line break (<br>, a Markdown hard break: how page ends come out of a PDF) separates sentences.
    if (node.previousSibling && node.previousSibling.nodeName === 'BR') entry.text += '\n';
    entry.nodes.push({ node: node, start: entry.text.length });
    entry.text += node.nodeValue;
    blocks.set(block, entry);
  }
  return Array.from(blocks.values());
}

/** Wraps the characters [start, end) of a block, over as many text nodes as they span, in <mark class="cited">. */
function markRange(block, start, end) {
  for (const { node, start: nodeStart } of block.nodes) {
    const from = Math.max(start, nodeStart) - nodeStart;
    const to = Math.min(end, nodeStart + node.nodeValue.length) - nodeStart;
    if (from >= to) continue;
    const range = document.createRange();
    range.setStart(node, from);
    range.setEnd(node, to);
    range.surroundContents(element('mark', 'cited'));
  }
}

/**
 * Marks, in the rendered passage under `root`, the sentence each claim (an answer's sentence citing this
 * passage) stands on, where one matches well enough; returns how many sentences were marked.
 */
export function markCitedSentences(root, claims) {
  if (!claims || claims.length === 0) return 0;
  const sentences = [];
  for (const block of textBlocks(root)) {
    for (const range of sentenceRanges(block.text)) sentences.push({ block: block, start: range.start, end: range.end, text: block.text.slice(range.start, range.end) });
  }
  const cited = citedSentenceIndices(claims, sentences.map((sentence) => sentence.text));
  // From the last to the first: marking splits text nodes, which would shift the offsets of later sentences in the same node.
  const chosen = Array.from(cited).sort((a, b) => b - a);
  for (const index of chosen) markRange(sentences[index].block, sentences[index].start, sentences[index].end);
  return chosen.length;
}
