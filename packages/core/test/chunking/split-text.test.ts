import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pythonStrip, splitText, splitTextSpans } from '../../src/chunking/split-text.ts';

interface GoldenChunk {
  heading_path: string;
  text: string;
}
interface GoldenCase {
  name: string;
  sections: { page_content: string }[];
  chunks_1200_200: GoldenChunk[];
  chunks_100_20: GoldenChunk[];
}

const golden = JSON.parse(
  readFileSync(new URL('../fixtures/chunking/markdown_split_golden.json', import.meta.url), 'utf8'),
) as { cases: GoldenCase[] };

const SIZES = [
  { key: 'chunks_1200_200', chunkSize: 1200, chunkOverlap: 200 },
  { key: 'chunks_100_20', chunkSize: 100, chunkOverlap: 20 },
] as const;

describe('splitText on LangChain sections (markdown_split_golden.json)', () => {
  for (const goldenCase of golden.cases) {
    for (const { key, chunkSize, chunkOverlap } of SIZES) {
      it(`${goldenCase.name} at ${chunkSize}/${chunkOverlap}`, () => {
        const chunks = goldenCase.sections.flatMap((s) => splitText(s.page_content, { chunkSize, chunkOverlap }));
        expect(chunks).toEqual(goldenCase[key].map((c) => c.text));
      });
    }
  }
});

describe('splitText semantics', () => {
  it('counts code points, not UTF-16 units', () => {
    const chunks = splitText('🚀'.repeat(15), { chunkSize: 10, chunkOverlap: 0 });
    expect(chunks.map((c) => Array.from(c).length)).toEqual([10, 5]);
  });

  it('strips with Python whitespace: U+001C and U+0085 go, U+FEFF stays', () => {
    expect(pythonStrip('\u001c\u0085 a \u00a0')).toBe('a');
    expect(pythonStrip('\ufeffa\ufeff')).toBe('\ufeffa\ufeff');
    expect(splitText('\u001cword\u001f', { chunkSize: 50, chunkOverlap: 0 })).toEqual(['word']);
  });

  it('keeps the separator at the start of the following piece', () => {
    expect(splitText('aaaa bbbb cccc', { chunkSize: 10, chunkOverlap: 0 })).toEqual(['aaaa bbbb', 'cccc']);
    expect(splitText('aaaa\nbbbb\ncccc', { chunkSize: 10, chunkOverlap: 5 })).toEqual(['aaaa\nbbbb', 'bbbb\ncccc']);
  });

  it('drops chunks that are only whitespace', () => {
    expect(splitText(' \n\n \n\n ', { chunkSize: 2, chunkOverlap: 0 })).toEqual([]);
  });

  it('rejects an overlap larger than the chunk size', () => {
    expect(() => splitText('x', { chunkSize: 10, chunkOverlap: 11 })).toThrow(RangeError);
  });

  it('gives spans that slice to the same chunks', () => {
    const text = golden.cases.map((c) => c.sections.map((s) => s.page_content).join('\n\n')).join('\n\n');
    const options = { chunkSize: 100, chunkOverlap: 20 };
    const spans = splitTextSpans(text, options);
    expect(spans.map(({ start, end }) => text.slice(start, end))).toEqual(splitText(text, options));
  });
});
