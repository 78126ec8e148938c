import type { ConvertedDocument, ItemBoxes, PageStart } from '../converters/converter.ts';
import type { Chunk } from '../domain.ts';
import { boxesOfSpan, pagesOfSpan, sourceOffset } from './pages.ts';
import { chunkId } from './chunk-id.ts';
import { assertMarkdownWithinLimits } from './markdown-limits.ts';
import { sectionText, splitMarkdownLayouts } from './markdown-sections.ts';
import { prefixChunkText } from './prefix.ts';
import { mergeSmallPieces } from './merge-small-pieces.ts';
import { carriedTableHeader } from './table-header.ts';
import { splitTextSpans, type SplitOptions } from './split-text.ts';

/** A Markdown document's chunks (see chunkDocument), with the pages and item boxes a converter placed in it. */
export function chunkMarkdown(markdown: string, source: string, options: SplitOptions, pageStarts?: readonly PageStart[], itemBoxes?: readonly ItemBoxes[]): Chunk[] {
  return chunkDocument({ markdown, pages: pageStarts ? [...pageStarts] : undefined, boxes: itemBoxes ? [...itemBoxes] : undefined }, source, options);
}

/**
 * Sections by heading, then size-split per section; chunk_index counts across the whole document.
 * With the converter's page starts, each chunk gets the pages its text lies on (the heading prefix aside);
 * with its item boxes, the boxes of the items it holds.
 * The splitter measures LangChain's section text so chunk boundaries (and ids) stay the Python
 * pipeline's; the restored code indentation rides along without moving them. A document nested too
 * deep or with too long a line is refused before parsing (RAG_DOCUMENT_TOO_COMPLEX, see markdown-limits.ts); a
 * document whose converter gave its structure is not parsed, so those limits do not apply to it.
 */
export function chunkDocument(document: ConvertedDocument, source: string, options: SplitOptions): Chunk[] {
  const { markdown, structure, pages: pageStarts, boxes: itemBoxes } = document;
  if (!structure) assertMarkdownWithinLimits(markdown);
  const pieces = splitMarkdownLayouts(markdown, structure).flatMap((layout) =>
    splitTextSpans(layout.langchainText, options).map(({ start, end }) => {
      const header = carriedTableHeader(layout.langchainText, start);
      const text = sectionText(layout, start, end);
      const [from, to] = [sourceOffset(layout.lineSources, start), sourceOffset(layout.lineSources, end - 1) + 1];
      const pages = pageStarts && pagesOfSpan(pageStarts, from, to);
      const boxes = itemBoxes && boxesOfSpan(itemBoxes, from, to);
      return { headingPath: layout.headingPath, text: header ? `${header}\n${text}` : text, pages, boxes };
    }),
  );
  const minChars = options.minChars ?? 0;
  return (minChars > 0 ? mergeSmallPieces(pieces, minChars) : pieces).map(({ headingPath, text, pages, boxes }, chunkIndex) => ({
    id: chunkId(source, chunkIndex),
    source,
    headingPath,
    chunkIndex,
    text: prefixChunkText(source, headingPath, text),
    ...(pages ? { pages } : {}),
    ...(boxes?.length ? { boxes } : {}),
  }));
}
