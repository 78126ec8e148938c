/**
 * The PDF's outline (bookmarks) as headings: each entry's title, its depth as the level, and the page its
 * destination points to. pdf.js's getOutline() gives `dest` as a named destination (a string, resolved with
 * getDestination) or an explicit one, an array whose first element is a page reference (resolved with
 * getPageIndex) or a 0-based page index; that is how pdf.js's own viewer follows it:
 * https://github.com/mozilla/pdf.js/blob/master/web/pdf_link_service.js (goToDestination) and
 * https://github.com/mozilla/pdf.js/blob/master/src/display/api.js (getOutline, getDestination, getPageIndex).
 */
import type { getDocumentProxy } from 'unpdf';

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;

interface OutlineNode {
  title: string;
  dest: string | unknown[] | null;
  items: OutlineNode[];
}

export interface OutlineHeading {
  title: string;
  /** 1 for a top-level entry, its depth below that. */
  level: number;
  /** 0-based. */
  pageIndex: number;
}

/** In outline order; [] for a PDF without an outline. Entries without a page (web links, broken destinations) are left out, their children kept. */
export async function outlineHeadings(document: PdfDocument): Promise<OutlineHeading[]> {
  const outline = ((await document.getOutline()) ?? []) as OutlineNode[];
  const headings: OutlineHeading[] = [];
  const visit = async (nodes: readonly OutlineNode[], level: number): Promise<void> => {
    for (const node of nodes) {
      const title = node.title.replace(/\s+/g, ' ').trim();
      const pageIndex = await destinationPage(document, node.dest);
      if (title !== '' && pageIndex !== undefined) headings.push({ title, level, pageIndex });
      await visit(node.items ?? [], level + 1);
    }
  };
  await visit(outline, 1);
  return headings;
}

async function destinationPage(document: PdfDocument, dest: OutlineNode['dest']): Promise<number | undefined> {
  try {
    const explicit = typeof dest === 'string' ? await document.getDestination(dest) : dest;
    const target = explicit?.[0];
    if (Number.isInteger(target)) return target as number;
    if (target && typeof target === 'object') return await document.getPageIndex(target as Parameters<PdfDocument['getPageIndex']>[0]);
  } catch {
    // A destination that names no page: the entry has no place in the text.
  }
  return undefined;
}
