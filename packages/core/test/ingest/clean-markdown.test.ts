import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/chunking/chunk-markdown.ts';
import { cleanConvertedMarkdown } from '../../src/converters/clean-markdown.ts';

/** Markdown as docling-serve's serializer writes it (docling_core's MarkdownDocSerializer): escaped, padded, linked. */
const DOCLING_MARKDOWN = [
  '## 28.2\\. The Cumulative Statistics System',
  '',
  'Run **pg\\_dump** with `--no_owner\\_x`, see [Section 30.6](wal-internals.html "30.6. WAL Internals") and <https://www.postgresql.org>.',
  '',
  '<!-- image -->',
  '',
  '| Column      | Type    |',
  '|-------------|---------|',
  '| pid         | integer |',
  '',
  '\\# not a heading, a comment',
  '',
  '```',
  'pg\\_dump [link](x)',
  '```',
].join('\n');

describe('Markdown a converter wrote, made clean chunk text', () => {
  it('has no escapes, link targets, strong emphasis markers, padding or image placeholders; code and code spans as written', () => {
    const cleaned = cleanConvertedMarkdown({ markdown: DOCLING_MARKDOWN });
    expect(cleaned.markdown.split('\n')).toEqual([
      '## 28.2. The Cumulative Statistics System',
      '',
      'Run pg_dump with `--no_owner\\_x`, see Section 30.6 and https://www.postgresql.org.',
      '',
      '',
      '',
      '| Column | Type |',
      '| --- | --- |',
      '| pid | integer |',
      '',
      '# not a heading, a comment',
      '',
      '```',
      'pg\\_dump [link](x)',
      '```',
    ]);
  });

  it('reads the structure before unescaping: an escaped # stays text, the heading path is clean', () => {
    const chunks = chunkDocument(cleanConvertedMarkdown({ markdown: DOCLING_MARKDOWN }), 'monitoring.pdf', { chunkSize: 1200, chunkOverlap: 200 });
    expect(chunks.map((chunk) => chunk.headingPath)).toEqual(['28.2. The Cumulative Statistics System']);
    expect(chunks[0]!.text).toContain('\n# not a heading, a comment\n');
  });

  it('moves page starts and item boxes line for line', () => {
    const markdown = 'First page \\_one\\_.\n\n[Second](x.html) page.';
    const box = { page: 2, l: 1, t: 2, r: 3, b: 4, origin: 'TOPLEFT' as const };
    const cleaned = cleanConvertedMarkdown({ markdown, pages: [{ page: 1, offset: 0 }, { page: 2, offset: markdown.indexOf('[Second]') }], boxes: [{ offset: markdown.indexOf('[Second]'), boxes: [box] }] });
    expect(cleaned.markdown).toBe('First page _one_.\n\nSecond page.');
    expect(cleaned.pages).toEqual([{ page: 1, offset: 0 }, { page: 2, offset: cleaned.markdown.indexOf('Second') }]);
    expect(cleaned.boxes).toEqual([{ offset: cleaned.markdown.indexOf('Second'), boxes: [box] }]);
  });
});
