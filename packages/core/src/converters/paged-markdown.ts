import type { ConvertedDocument } from './converter.ts';

/** One page's (or slide's) Markdown, numbered from 1 as the document shows it. */
export interface PageMarkdown {
  page: number;
  markdown: string;
}

/** Pages joined by a blank line, each starting a paragraph, with where each starts; empty pages are left out. */
export function joinPages(pages: readonly PageMarkdown[]): ConvertedDocument {
  const kept = pages.filter((page) => page.markdown !== '');
  let offset = 0;
  const starts = kept.map(({ page, markdown }) => {
    const start = { page, offset };
    offset += markdown.length + 2;
    return start;
  });
  const markdown = kept.length > 0 ? `${kept.map((page) => page.markdown).join('\n\n')}\n` : '';
  return { markdown, pages: starts };
}
