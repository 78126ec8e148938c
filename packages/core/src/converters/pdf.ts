import { getDocumentProxy } from 'unpdf';
import type { Converter, ConvertedDocument } from './converter.ts';
import { fontSizeHeadings } from './pdf/font-headings.ts';
import { outlineHeadings, type OutlineHeading } from './pdf/outline.ts';
import { placeOutlineHeadings } from './pdf/outline-placement.ts';
import { pagedDocument } from './pdf/paged-document.ts';
import { linesOfPage, type TextLine } from './pdf/page-lines.ts';
import { dropRunningLines } from './pdf/running-lines.ts';
import { reasonOf, unreadable } from './unreadable.ts';

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;

/**
 * Embedded PDF text extraction (pdf.js through unpdf), one pass over the pages, each page's start kept for
 * citations. Headings come from the PDF's outline (bookmarks) when it has one, else from font sizes
 * (pdf/font-headings.ts); running heads, footers and page numbers are left out. docling-serve (DOCLING_URL)
 * recovers tables and scanned text.
 */
export class PdfConverter implements Converter {
  readonly extensions = ['pdf'] as const;
  readonly offThread = true;
  readonly pagedExtensions = ['pdf'] as const;

  async toMarkdown(bytes: Buffer): Promise<string> {
    return (await this.toPagedMarkdown(bytes)).markdown;
  }

  async toPagedMarkdown(bytes: Buffer, _fileName?: string, signal?: AbortSignal): Promise<ConvertedDocument> {
    if (bytes.length === 0) throw unreadable('empty file');
    const { pages, outline } = await readPdf(bytes, signal);
    const body = dropRunningLines(pages);
    if (body.every((lines) => lines.length === 0)) throw unreadable('no extractable text (scanned or image-only PDF?)');
    return pagedDocument(outline.length > 0 ? placeOutlineHeadings(body, outline) : fontSizeHeadings(body));
  }
}

/** pdf.js's VerbosityLevel.ERRORS: its warnings ("Indexing all PDF objects") are noise in the job's output. */
const PDFJS_ERRORS_ONLY = 0;

async function readPdf(bytes: Buffer, signal?: AbortSignal): Promise<{ pages: TextLine[][]; outline: OutlineHeading[] }> {
  let document: PdfDocument;
  try {
    // pdf.js takes ownership of (detaches) the array it is given: hand it a copy. No code compiled from a
    // document's fonts (isEvalSupported, the path of CVE-2024-4367): unpdf 1.7.0 defaults to it, said here so
    // that no upgrade of unpdf changes it. CVE-2026-16633, reported against this pdf.js (5.6.205), is in the
    // viewer's document scripting (`enableScripting`, read by the annotation layer a browser renders): text
    // extraction renders no annotation layer, and the bundle carries no scripting sandbox.
    document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: PDFJS_ERRORS_ONLY, isEvalSupported: false });
  } catch (error) {
    throw unreadable(`not a readable PDF: ${reasonOf(error)}`, error);
  }
  try {
    const pages = await pageLines(document, signal);
    return { pages, outline: await outlineHeadings(document).catch(() => []) };
  } finally {
    await document.destroy();
  }
}

/** Each page's lines, one page at a time (its text content read once, then released). */
async function pageLines(document: PdfDocument, signal?: AbortSignal): Promise<TextLine[][]> {
  const pages: TextLine[][] = [];
  for (let pageNumber = 1; pageNumber <= document.numPages; pageNumber += 1) {
    signal?.throwIfAborted();
    try {
      const page = await document.getPage(pageNumber);
      pages.push(linesOfPage((await page.getTextContent()).items));
      page.cleanup();
    } catch (error) {
      throw unreadable(`PDF text extraction failed: ${reasonOf(error)}`, error);
    }
  }
  return pages;
}
