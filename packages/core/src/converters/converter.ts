import type { PageBox } from '../domain.ts';

/** Turns a document's bytes into Markdown, keeping headings where the format has them. */
export interface Converter {
  /** Lower-case extensions without the dot, e.g. ['pdf', 'docx']. */
  readonly extensions: readonly string[];
  toMarkdown(bytes: Buffer, fileName: string, signal?: AbortSignal): Promise<string>;
  /** The extensions whose documents toPagedMarkdown places on pages (PDF pages, PPTX slides). */
  readonly pagedExtensions?: readonly string[];
  /** toMarkdown's Markdown with where each page starts in it; `pages` absent for a document of a type without pages. */
  toPagedMarkdown?(bytes: Buffer, fileName: string, signal?: AbortSignal): Promise<PagedMarkdown>;
}

/** Where a page or slide (`page`, 1-based) starts in the Markdown: a UTF-16 offset. */
export interface PageStart {
  page: number;
  offset: number;
}

export interface PagedMarkdown {
  markdown: string;
  /** Ascending by offset and by page; [] when the document has pages but none could be placed. */
  pages?: PageStart[] | undefined;
  /** Where each item with boxes (a docling item) starts, ascending by offset; absent when the converter gives none. */
  boxes?: ItemBoxes[] | undefined;
}

/** The boxes of an item starting at `offset` (a UTF-16 offset in the Markdown) and running up to the next one. */
export interface ItemBoxes {
  offset: number;
  boxes: PageBox[];
}

/** The document as Markdown, with its page starts when the converter places it on pages. */
export async function convertDocument(converter: Converter, bytes: Buffer, fileName: string, signal?: AbortSignal): Promise<PagedMarkdown> {
  if (converter.toPagedMarkdown) return converter.toPagedMarkdown(bytes, fileName, signal);
  return { markdown: await converter.toMarkdown(bytes, fileName, signal) };
}

/** Whether the converter places documents of this extension on pages. */
export function pagesDocuments(converter: Converter, extension: string): boolean {
  return converter.pagedExtensions?.includes(extension) ?? false;
}
