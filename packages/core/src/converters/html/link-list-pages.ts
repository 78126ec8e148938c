/**
 * Pages whose content is nearly all links: tables of contents, indexes, sitemaps, a section's landing page
 * listing its subpages. Every documentation site has them; they are ordinary pages, never refused. Indexed
 * with their links, they answer a query for any page's subject with a list of titles, ahead of the page
 * itself; so by default (INGEST_LINK_PAGES=light) such a page is indexed without its lists of links: its
 * headings and its own text. INGEST_LINK_PAGES=full indexes its links as lists.
 */
export type LinkPagesPolicy = 'light' | 'full';

export const LINK_PAGES_POLICIES: readonly LinkPagesPolicy[] = ['light', 'full'];

/** At least this many links... */
const MIN_LINKS = 20;
/**
 * ...holding at least this share of the content's text. Measured on the Debian manuals: the pages above it are
 * contents, indexes and landing pages of sections; a module index of names with a line each (0.48) stays.
 */
export const MIN_LINK_DENSITY = 0.5;
/**
 * Indexed lightly, a link list loses every block of links that is this much links: an index's entries
 * ("abbrev, Network Address Functions and Operators") are half term, half link.
 */
export const LIGHT_LIST_LINK_DENSITY = 0.3;

export function isLinkListPage(content: { links: number; linkDensity: number }): boolean {
  return content.links >= MIN_LINKS && content.linkDensity >= MIN_LINK_DENSITY;
}
