/**
 * The PDF converter's line steps on hand-built pages: outline titles placed on the lines that read as them
 * (pdf/outline-placement.ts), and running heads and footers told from text (pdf/running-lines.ts). Each case
 * is one a plausible slip in those steps gets wrong while the whole-PDF tests (pdf-headings.test.ts) still pass.
 */
import { describe, expect, it } from 'vitest';
import type { MarkedLine } from '../../src/converters/pdf/heading-lines.ts';
import type { OutlineHeading } from '../../src/converters/pdf/outline.ts';
import { placeOutlineHeadings } from '../../src/converters/pdf/outline-placement.ts';
import type { TextLine } from '../../src/converters/pdf/page-lines.ts';
import { dropRunningLines } from '../../src/converters/pdf/running-lines.ts';

const BODY = 10;

/** A page's lines from the top down, 14 points apart (body text, no gap that sets a line apart). */
function page(...texts: string[]): TextLine[] {
  return texts.map((text, index) => ({ text, size: BODY, y: 700 - 14 * index }));
}

function heading(title: string, level = 1, pageIndex = 0): OutlineHeading {
  return { title, level, pageIndex };
}

/** The page as "# title" for heading lines and plain text for the others. */
function shown(lines: readonly MarkedLine[]): string[] {
  return lines.map((line) => (line.headingLevel === undefined ? line.text : `${'#'.repeat(line.headingLevel)} ${line.text}`));
}

describe('outline titles placed on their page (outline-placement.ts)', () => {
  it('searches for each title after the previous one, and puts a title on no line right after the previous heading', () => {
    const [placed] = placeOutlineHeadings(
      [page('Front matter mentions Storage only in passing.', 'Storage', 'Lubrication', 'Grease the bearings every 400 hours.', 'Storage', 'Keep the pump dry.')],
      // "Storage" is the page's third heading: found after "Lubrication", not on the earlier line of that text.
      // "Safety" is on no line: it goes right after "Lubrication", the heading before it.
      [heading('Lubrication'), heading('Safety', 2), heading('Storage')],
    );
    expect(shown(placed!)).toEqual([
      'Front matter mentions Storage only in passing.',
      'Storage',
      '# Lubrication',
      '## Safety',
      'Grease the bearings every 400 hours.',
      '# Storage',
      'Keep the pump dry.',
    ]);
  });

  it('takes a title wrapped over two lines, but never swallows a longer line before it', () => {
    const [wrapped] = placeOutlineHeadings(
      [page('Intro text.', '4.2 Reading from relational', 'databases with ODBC', 'The RODBC package provides access.')],
      [heading('Reading from relational databases with ODBC')],
    );
    expect(shown(wrapped!)).toEqual(['Intro text.', '# Reading from relational databases with ODBC', 'The RODBC package provides access.']);

    // A rule of symbols (as long as the title, nothing left of it once compared) stays text: the title is the next line.
    const [ruled] = placeOutlineHeadings([page('Intro text.', '* * * * * * * * * * * *', 'Grease nipples', 'Wipe the nipple first.')], [heading('Grease nipples')]);
    expect(shown(ruled!)).toEqual(['Intro text.', '* * * * * * * * * * * *', '# Grease nipples', 'Wipe the nipple first.']);
  });

  it.each([
    ['6.1 Pumps', 'Pumps'],
    ['6.1. Pumps', 'Pumps'],
    ['Chapter 3: Spreadsheet-like data', 'Spreadsheet-like data'],
    ['Chapter 12 Spreadsheet-like data', 'Spreadsheet-like data'],
    ['Appendix B Glossary of terms', 'Glossary of terms'],
    ['A.2 Seal kits', 'Seal kits'],
    ['Section 4.1: Seal kits', 'Seal kits'],
  ])('reads the line "%s" as the outline title "%s", the section number aside', (line, title) => {
    const [placed] = placeOutlineHeadings([page('Text before.', line, 'Text after.')], [heading(title)]);
    // Placed on that line (it is replaced), not inserted at the page start with the line left as text.
    expect(shown(placed!)).toEqual(['Text before.', `# ${title}`, 'Text after.']);
  });
});

const WORDS = ['intake', 'outlet', 'bypass', 'relief', 'drain', 'vent', 'check', 'gate', 'globe', 'needle', 'float', 'spool'];

/** `count` pages of body text, each with the given top line (a function of the 1-based page number) and a page number at the bottom. */
function pages(count: number, top: (number: number) => TextLine | undefined): TextLine[][] {
  return Array.from({ length: count }, (_, index) => {
    // Body lines whose text differs from page to page in more than its numbers.
    const word = WORDS[index % WORDS.length]!;
    const body = page(`The ${word} valve opens first.`, `Then the ${word} gauge is read.`, `The ${word} log is signed.`);
    const head = top(index + 1);
    return [...(head ? [head] : []), ...body, { text: String(index + 1), size: BODY, y: 60 }];
  });
}

/** The texts dropped from each page. */
function dropped(before: readonly TextLine[][], after: readonly TextLine[][]): string[][] {
  return before.map((lines, index) => lines.filter((line) => !after[index]!.includes(line)).map((line) => line.text));
}

describe('running heads and footers (running-lines.ts)', () => {
  it('drops a running head whose page number changes from page to page (numbers aside)', () => {
    // Right above the body (no gap that sets it apart): only its text, numbers aside, makes it a running head.
    const input = pages(4, (number) => ({ text: `Pump handbook, field edition ${number}`, size: BODY, y: 714 }));
    expect(dropped(input, dropRunningLines(input))).toEqual(
      [1, 2, 3, 4].map((number) => [`Pump handbook, field edition ${number}`, String(number)]),
    );
  });

  it('drops a line standing apart at one height on half the pages or more, whatever its text', () => {
    const input = pages(10, (number) => (number <= 5 ? { text: `Chapter ${number}: Title of chapter ${'x'.repeat(number)}`, size: BODY, y: 760 } : undefined));
    const out = dropped(input, dropRunningLines(input));
    expect(out.slice(0, 5).every((texts) => texts.some((text) => text.startsWith('Chapter ')))).toBe(true);
  });

  it('keeps a line standing apart at one height on fewer than half the pages (3 chapter openings of 10 pages)', () => {
    const titles = new Map([
      [1, 'Installing the heron pump'],
      [4, 'Lubrication schedule'],
      [8, 'Troubleshooting the seals'],
    ]);
    const input = pages(10, (number) => (titles.has(number) ? { text: titles.get(number)!, size: BODY, y: 760 } : undefined));
    const out = dropped(input, dropRunningLines(input));
    // Only the page numbers go: each chapter title set apart at the same height is text.
    expect(out).toEqual(Array.from({ length: 10 }, (_, index) => [String(index + 1)]));
  });
});
