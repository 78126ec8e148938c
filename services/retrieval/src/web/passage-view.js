// A passage's text as the page shows it: Markdown rendered and sanitised as answers are, with marks.
import { markCitedSentences, markTerms } from './highlight.js';
import { markdownFragment } from './markdown.js';

/** Chunk texts start with the `<source> > <heading path>` line the pipeline embeds; the page shows both already. */
export function passageBody(passage) {
  const title = passage.heading_path ? passage.source + ' > ' + passage.heading_path : passage.source;
  const text = String(passage.text);
  if (text.startsWith(title + '\n')) return text.slice(title.length).replace(/^\n+/, '');
  return text;
}

/**
 * Renders the passage into `container`, then marks the query's `terms` or, for a cited passage, the
 * sentences its `claims` (the answer's sentences citing it) stand on. Returns how many sentences were marked.
 */
export function renderPassage(container, passage, marks) {
  container.replaceChildren(markdownFragment(passageBody(passage)));
  container.classList.add('markdown');
  if (marks && marks.terms) markTerms(container, marks.terms);
  return marks && marks.claims ? markCitedSentences(container, marks.claims) : 0;
}
