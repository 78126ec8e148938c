import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import { pagesOfSpan } from '../../src/chunking/pages.ts';
import type { PageStart } from '../../src/converters/converter.ts';

const golden = JSON.parse(readFileSync(new URL('../fixtures/chunking/markdown_split_golden.json', import.meta.url), 'utf8')) as { cases: Array<{ name: string; input: string }> };

/** Every line of `markdown` on a page of its own: page n is line n. */
function pagePerLine(markdown: string): PageStart[] {
  let offset = 0;
  return markdown.split('\n').map((line, index) => {
    const start = { page: index + 1, offset };
    offset += line.length + 1;
    return start;
  });
}

const DOCUMENT = [
  '# Pump station',
  '',
  'Kestrel valves are serviced twice a year.',
  '   Bleed the line below two bar first.',
  '',
  '## Lubrication',
  '',
  '```yaml',
  'grease:',
  '  interval_hours: 400',
  '```',
  '',
  `${'Heron pump bearings take lithium grease. '.repeat(6)}🦩 done.`,
  '',
  'Osprey filters are due at half a bar.',
].join('\n');

describe('chunks on pages', () => {
  it('leaves the chunks themselves (ids, texts, heading paths) as they are without pages', () => {
    for (const { name, input } of golden.cases) {
      for (const options of [{ chunkSize: 1200, chunkOverlap: 200 }, { chunkSize: 100, chunkOverlap: 20 }]) {
        const plain = chunkMarkdown(input, 'doc.md', options);
        const paged = chunkMarkdown(input, 'doc.md', options, pagePerLine(input));
        expect(paged.map(({ pages: _pages, ...chunk }) => chunk), name).toEqual(plain);
        expect(plain.every((chunk) => !('pages' in chunk))).toBe(true);
      }
    }
  });

  it('gives each chunk the lines (as pages) from its first words to its last, ascending', () => {
    const lines = DOCUMENT.split('\n');
    const chunks = chunkMarkdown(DOCUMENT, 'manual.pdf', { chunkSize: 120, chunkOverlap: 30 }, pagePerLine(DOCUMENT));

    expect(chunks.length).toBeGreaterThan(4);
    for (const chunk of chunks) {
      const bodyLines = chunk.text.slice(chunk.text.indexOf('\n\n') + 2).split('\n');
      const firstPage = chunk.pages![0]!;
      const lastPage = chunk.pages!.at(-1)!;
      // Line n is page n: the chunk's first words are on its first page's line, its last words on its last page's.
      expect(lines[firstPage - 1], chunk.text).toContain(bodyLines[0]!.trim().slice(0, 20));
      expect(lines[lastPage - 1], chunk.text).toContain(bodyLines.at(-1)!.trim().slice(-20));
      expect(chunk.pages).toEqual([...chunk.pages!].sort((a, b) => a - b));
    }
    // The code block's lines keep their pages through the indentation restored in them.
    expect(chunks.find((chunk) => chunk.text.includes('interval_hours'))?.pages).toEqual([8, 9, 10, 11]);
  });

  it('puts text before the first page start on no page', () => {
    expect(pagesOfSpan([{ page: 3, offset: 10 }], 0, 5)).toEqual([]);
    expect(pagesOfSpan([{ page: 3, offset: 10 }, { page: 4, offset: 20 }], 5, 12)).toEqual([3]);
    expect(pagesOfSpan([{ page: 3, offset: 10 }, { page: 4, offset: 20 }], 19, 20)).toEqual([3]);
    expect(pagesOfSpan([{ page: 3, offset: 10 }, { page: 4, offset: 20 }], 19, 21)).toEqual([3, 4]);
    expect(pagesOfSpan([{ page: 3, offset: 10 }, { page: 4, offset: 20 }], 25, 40)).toEqual([4]);
  });
});
