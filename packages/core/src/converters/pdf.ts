import { extractText, getDocumentProxy } from 'unpdf';
import type { Converter, ConvertedDocument } from './converter.ts';
import { joinPages } from './paged-markdown.ts';
import { reasonOf, unreadable } from './unreadable.ts';

/**
 * Embedded PDF text extraction (pdf.js through unpdf), one paragraph block per page, each page's start
 * kept for citations. A PDF has no heading structure to keep; docling-serve (DOCLING_URL) recovers
 * headings, tables and scanned text.
 */
export class PdfConverter implements Converter {
  readonly extensions = ['pdf'] as const;
  readonly offThread = true;
  readonly pagedExtensions = ['pdf'] as const;

  async toMarkdown(bytes: Buffer): Promise<string> {
    return (await this.toPagedMarkdown(bytes)).markdown;
  }

  async toPagedMarkdown(bytes: Buffer): Promise<ConvertedDocument> {
    if (bytes.length === 0) throw unreadable('empty file');
    const pages = await extractPages(bytes);
    // unpdf gives one text per page, in page order (mergePages: false): the page number is its position.
    const paged = joinPages(pages.map((text, index) => ({ page: index + 1, markdown: text.trim() })));
    if (paged.markdown === '') throw unreadable('no extractable text (scanned or image-only PDF?)');
    return paged;
  }
}

/** pdf.js's VerbosityLevel.ERRORS: its warnings ("Indexing all PDF objects") are noise in the job's output. */
const PDFJS_ERRORS_ONLY = 0;

async function extractPages(bytes: Buffer): Promise<string[]> {
  let document;
  try {
    // pdf.js takes ownership of (detaches) the array it is given: hand it a copy.
    document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: PDFJS_ERRORS_ONLY });
  } catch (error) {
    throw unreadable(`not a readable PDF: ${reasonOf(error)}`, error);
  }
  try {
    const { text } = await extractText(document, { mergePages: false });
    return text;
  } catch (error) {
    throw unreadable(`PDF text extraction failed: ${reasonOf(error)}`, error);
  } finally {
    await document.destroy();
  }
}
