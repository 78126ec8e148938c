/**
 * Headings of PDF chunks from the embedded converter: from the outline of a real texinfo manual (R-data.pdf,
 * fixtures/pdf-manuals/README.md), and from font sizes in a PDF without an outline, with running heads and
 * page numbers left out of the text.
 */
import { readFile } from 'node:fs/promises';
import PDFDocument from 'pdfkit';
import { getDocumentProxy } from 'unpdf';
import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/chunking/chunk-markdown.ts';
import type { Chunk } from '../../src/index.ts';
import { PdfConverter } from '../../src/ingestion.ts';

const R_DATA = new URL('../fixtures/pdf-manuals/R-data.pdf', import.meta.url).pathname;
const CHUNKING = { chunkSize: 1200, chunkOverlap: 200 };

async function chunksOf(bytes: Buffer, source: string): Promise<Chunk[]> {
  return chunkDocument(await new PdfConverter().toPagedMarkdown(bytes, source), source, CHUNKING);
}

/**
 * The manual's outline titles and each page's text, read with pdf.js apart from the converter. pdf.js's
 * getOutline() gives nested `items` with a `title` each
 * (https://github.com/mozilla/pdf.js/blob/master/src/display/api.js, PDFDocumentProxy.getOutline).
 */
async function pdfOutlineAndPages(path: string): Promise<{ titles: Set<string>; pages: string[] }> {
  const document = await getDocumentProxy(new Uint8Array(await readFile(path)), { verbosity: 0 });
  try {
    const titles = new Set<string>();
    const visit = (items: { title: string; items: unknown[] }[]): void => {
      for (const item of items) {
        titles.add(item.title);
        visit(item.items as typeof items);
      }
    };
    visit((await document.getOutline()) ?? []);
    const pages: string[] = [];
    for (let number = 1; number <= document.numPages; number += 1) {
      const content = await (await document.getPage(number)).getTextContent();
      pages.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
    }
    return { titles, pages };
  } finally {
    await document.destroy();
  }
}

function withoutSpaces(text: string): string {
  return text.replace(/\s+/g, '');
}

/** The 1-based number of the one page whose text holds `phrase`. */
function pageHolding(pages: string[], phrase: string): number {
  const numbers = pages.flatMap((text, index) => (withoutSpaces(text).includes(withoutSpaces(phrase)) ? [index + 1] : []));
  expect(numbers, `"${phrase}" is on one page`).toHaveLength(1);
  return numbers[0]!;
}

describe('PDF headings from the outline (R-data.pdf, a texinfo manual)', () => {
  it('puts each passage under its chapter and section titles, as the outline names them', async () => {
    const chunks = await chunksOf(await readFile(R_DATA), 'R-data.pdf');
    const { pages } = await pdfOutlineAndPages(R_DATA);

    const chapterIntro = chunks.find((chunk) => chunk.text.includes('we consider importing such'));
    expect(chapterIntro?.headingPath).toBe('2 Spreadsheet-like data');
    expect(chapterIntro?.text.startsWith('R-data.pdf > 2 Spreadsheet-like data\n')).toBe(true);
    const fixedWidth = chunks.find((chunk) => chunk.text.includes('read.fwf') && chunk.headingPath.endsWith('Fixed-width-format files'));
    expect(fixedWidth?.headingPath).toBe('2 Spreadsheet-like data > Fixed-width-format files');
    const dbi = chunks.find((chunk) => chunk.headingPath.endsWith('Packages using DBI'));
    expect(dbi?.headingPath).toBe('4 Relational databases > R interface packages > Packages using DBI');
    // The heading sits where the section starts on its page: the chunk's page is the one pdf.js shows it on.
    expect(chapterIntro?.pages?.[0]).toBe(pageHolding(pages, 'we consider importing such'));
  });

  it('takes every heading path part from the outline, never from a line of text', async () => {
    const chunks = await chunksOf(await readFile(R_DATA), 'R-data.pdf');
    const { titles } = await pdfOutlineAndPages(R_DATA);
    expect(titles.size).toBeGreaterThan(40);

    const parts = new Set(chunks.flatMap((chunk) => (chunk.headingPath === '' ? [] : chunk.headingPath.split(' > '))));
    expect([...parts].filter((part) => !titles.has(part))).toEqual([]);
    // Nearly every chunk is under a section: only the title page and the table of contents come before the first.
    expect(chunks.filter((chunk) => chunk.headingPath !== '').length / chunks.length).toBeGreaterThan(0.9);
  });

  it('leaves the running heads ("Chapter 2: Spreadsheet-like data 9") out of the text, and keeps every page on its number', async () => {
    const chunks = await chunksOf(await readFile(R_DATA), 'R-data.pdf');
    const { pages } = await pdfOutlineAndPages(R_DATA);

    expect(chunks.filter((chunk) => /^(?:Chapter|Appendix) \w+: .* \d+$/m.test(chunk.text)).map((chunk) => chunk.chunkIndex)).toEqual([]);
    for (const chunk of chunks) {
      const firstLine = chunk.text.split('\n').slice(2).find((line) => line.length > 30 && !line.includes('. . .'));
      if (!firstLine) continue;
      // Compared without spaces: pdf.js's items split a line where the converter joins them.
      expect(withoutSpaces(pages[chunk.pages![0]! - 1]!), `chunk ${chunk.chunkIndex} starts on page ${chunk.pages![0]}`).toContain(withoutSpaces(firstLine.slice(0, 30)));
    }
  });
});

/** A manual without an outline: a 22-point title, 16- and 13-point headings, 11-point body, a running head and page numbers. */
function manualWithoutOutline(): Promise<Buffer> {
  const document = new PDFDocument({ compress: false, autoFirstPage: false, info: { CreationDate: new Date(0) } });
  const parts: Buffer[] = [];
  document.on('data', (part: Buffer) => parts.push(part));
  const ended = new Promise<Buffer>((resolve, reject) => {
    document.on('end', () => resolve(Buffer.concat(parts)));
    document.on('error', reject);
  });
  const body = (text: string): void => void document.fontSize(11).text(text, { width: 450 }).moveDown(0.5);
  const heading = (size: number, text: string): void => void document.fontSize(size).text(text).moveDown(0.3);
  const page = (number: number, write: () => void): void => {
    document.addPage();
    document.fontSize(9).text('Pump handbook, field edition', 72, 36);
    document.fontSize(9).text(String(number), 300, 740, { lineBreak: false });
    document.x = 72;
    document.y = 80;
    write();
  };
  const filler = 'The crew records every reading in the log book before the shift ends, and the supervisor signs it. ';
  page(1, () => {
    heading(22, 'Pump handbook');
    body(`This handbook covers the heron pumps of the east station. ${filler}`);
    heading(16, 'Lubrication');
    body(`Heron pump bearings take lithium grease every four hundred running hours. ${filler.repeat(3)}`);
    heading(13, 'Grease nipples');
    body(`Wipe the nipple before pumping three strokes of grease. ${filler}`);
    document.fontSize(16).text('A large-type warning that is a full sentence.');
    body(`# not a heading: a shell comment quoted in the text. ${filler}`);
  });
  page(2, () => {
    body(`Overgreasing a heron pump bearing raises its temperature. ${filler.repeat(2)}`);
    heading(16, 'Filter replacement');
    body(`An osprey filter is due when the differential pressure passes half a bar. ${filler.repeat(2)}`);
  });
  page(3, () => {
    heading(13, 'Cartridge fitting');
    body(`Fit the new osprey cartridge dry; wetting the seal with fuel makes it swell. ${filler.repeat(2)}`);
  });
  document.end();
  return ended;
}

describe('PDF headings from font sizes (a PDF without an outline)', () => {
  it('makes the lines set larger than the body headings, levels by size, and no sentence a heading', async () => {
    const chunks = await chunksOf(await manualWithoutOutline(), 'pumps.pdf');
    const under = (phrase: string): string | undefined => chunks.find((chunk) => chunk.text.includes(phrase))?.headingPath;

    expect(under('covers the heron pumps')).toBe('Pump handbook');
    expect(under('lithium grease')).toBe('Pump handbook > Lubrication');
    expect(under('Wipe the nipple')).toBe('Pump handbook > Lubrication > Grease nipples');
    expect(under('Overgreasing')).toBe('Pump handbook > Lubrication > Grease nipples');
    expect(under('osprey filter is due')).toBe('Pump handbook > Filter replacement');
    expect(under('osprey cartridge dry')).toBe('Pump handbook > Filter replacement > Cartridge fitting');
    // A large-type sentence and a '#' line are text.
    expect(under('A large-type warning')).toBe('Pump handbook > Lubrication > Grease nipples');
    expect(under('# not a heading')).toBe('Pump handbook > Lubrication > Grease nipples');
  });

  it('leaves the running head and the page numbers out of the text, and keeps each passage on its page', async () => {
    const chunks = await chunksOf(await manualWithoutOutline(), 'pumps.pdf');

    expect(chunks.some((chunk) => chunk.text.includes('field edition'))).toBe(false);
    expect(chunks.some((chunk) => /^\d+$/m.test(chunk.text))).toBe(false);
    expect(chunks.find((chunk) => chunk.text.includes('osprey cartridge dry'))?.pages).toEqual([3]);
    expect(chunks.find((chunk) => chunk.text.includes('covers the heron pumps'))?.pages?.[0]).toBe(1);
  });
});

/**
 * A PDF whose outline pdfkit writes with explicit destinations (`[pageRef, /Fit]`, PDFOutline.addItem in
 * pdfkit's js/pdfkit.js), every line set in one size: only the outline can give its headings. The page prints
 * "1.1 Grease nipples" where the outline says "Grease nipples"; "Safety" is in the outline but on no line.
 */
function outlinedManual(): Promise<Buffer> {
  const document = new PDFDocument({ compress: false, info: { CreationDate: new Date(0) } });
  const parts: Buffer[] = [];
  document.on('data', (part: Buffer) => parts.push(part));
  const ended = new Promise<Buffer>((resolve, reject) => {
    document.on('end', () => resolve(Buffer.concat(parts)));
    document.on('error', reject);
  });
  document.fontSize(11);
  const lubrication = document.outline.addItem('1 Lubrication');
  document.text('1 Lubrication').moveDown(0.5);
  document.text('Heron pump bearings take lithium grease every four hundred running hours.').moveDown(0.5);
  lubrication.addItem('Grease nipples');
  document.text('1.1 Grease nipples').moveDown(0.5);
  document.text('Wipe the nipple before pumping three strokes of grease.');
  document.addPage();
  document.outline.addItem('2 Safety');
  document.text('Isolate the pump at the breaker and tag it before any work on it.');
  document.end();
  return ended;
}

describe('PDF headings from an outline with explicit destinations', () => {
  it('places each title on the line that reads as it, section number aside, or at its page start', async () => {
    const chunks = await chunksOf(await outlinedManual(), 'outlined.pdf');
    const under = (phrase: string): Chunk | undefined => chunks.find((chunk) => chunk.text.includes(phrase));

    expect(under('lithium grease')?.headingPath).toBe('1 Lubrication');
    expect(under('Wipe the nipple')?.headingPath).toBe('1 Lubrication > Grease nipples');
    expect(under('Isolate the pump')).toMatchObject({ headingPath: '2 Safety', pages: [2] });
    // The heading lines are headings, not text.
    expect(chunks.some((chunk) => chunk.text.includes('1.1 Grease nipples'))).toBe(false);
  });
});
