import type { PageBox } from '../domain.ts';

/** Turns a document's bytes into Markdown, keeping headings where the format has them. */
export interface Converter {
  /** Lower-case extensions without the dot, e.g. ['pdf', 'docx']. */
  readonly extensions: readonly string[];
  /**
   * One of the embedded converters (createEmbeddedConverters): pure computation that a document-preparation
   * worker thread runs with its own instance, so the ingest converts its documents off the main thread.
   */
  readonly offThread?: boolean;
  toMarkdown(bytes: Buffer, fileName: string, signal?: AbortSignal): Promise<string>;
  /** The extensions whose documents toPagedMarkdown places on pages (PDF pages, PPTX slides). */
  readonly pagedExtensions?: readonly string[];
  /** toMarkdown's Markdown with where each page starts in it; `pages` absent for a document of a type without pages. */
  toPagedMarkdown?(bytes: Buffer, fileName: string, signal?: AbortSignal): Promise<ConvertedDocument>;
}

/** The structure of a converted document's Markdown, by line (0-based, the Markdown split on "\n"). */
export interface DocumentStructure {
  /** In line order. A heading line is left out of the chunks' text; its text joins their heading path. */
  headings: HeadingLine[];
  /** In line order: code whose lines keep their indentation in the chunks' text. */
  codeBlocks: CodeLines[];
  /** In line order: where sections close without a heading of their own (a definition list's entries end). */
  sectionEnds?: SectionEnd[];
}

/** Line `line` (a blank one) closes the open headings of `level` and deeper. */
export interface SectionEnd {
  line: number;
  level: number;
}

/** Line `line` is a heading of `level` (1 the highest; a heading closes every open one of its level or deeper). */
export interface HeadingLine {
  line: number;
  level: number;
  text: string;
}

/** A fenced code block: `openingLine` and `closingLine` are its fences, the lines between them its code. */
export interface CodeLines {
  openingLine: number;
  closingLine: number;
}

/** Where a page or slide (`page`, 1-based) starts in the Markdown: a UTF-16 offset. */
export interface PageStart {
  page: number;
  offset: number;
}

/** A converted document: Markdown, and what the converter knows of its structure and pages. */
export interface ConvertedDocument {
  markdown: string;
  /**
   * The document's headings and code blocks as the converter found them. Given, the chunker takes them as
   * they are and reads no Markdown syntax: a text line that happens to start with `#` (a shell comment in
   * a PDF) stays text. Absent, the Markdown is parsed for its ATX headings and fenced code.
   */
  structure?: DocumentStructure | undefined;
  /** Set for an HTML page that is nearly all links (a table of contents, an index): see html/link-list-pages.ts. */
  linkList?: { links: number; indexedLightly: boolean } | undefined;
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
export async function convertDocument(converter: Converter, bytes: Buffer, fileName: string, signal?: AbortSignal): Promise<ConvertedDocument> {
  if (converter.toPagedMarkdown) return converter.toPagedMarkdown(bytes, fileName, signal);
  return { markdown: await converter.toMarkdown(bytes, fileName, signal) };
}

/** Whether the converter places documents of this extension on pages. */
export function pagesDocuments(converter: Converter, extension: string): boolean {
  return converter.pagedExtensions?.includes(extension) ?? false;
}
