import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/chunking/chunk-markdown.ts';

const options = { chunkSize: 1200, chunkOverlap: 200 };

describe('chunkDocument with the structure a converter gives', () => {
  it('takes the declared headings, at any depth, and reads no Markdown syntax in the text', () => {
    const markdown = ['# Manual', 'Intro.', '#### Installing packages', '# my personal functions', 'more text', '## Manual again'].join('\n');
    const chunks = chunkDocument(
      {
        markdown,
        structure: {
          headings: [
            { line: 0, level: 1, text: 'Manual' },
            { line: 2, level: 4, text: 'Installing packages' },
            { line: 5, level: 1, text: 'Manual' },
          ],
          codeBlocks: [],
        },
      },
      'R-admin.pdf',
      options,
    );
    expect(chunks.map((chunk) => [chunk.headingPath, chunk.text.split('\n\n')[1]])).toEqual([
      ['Manual', 'Intro.'],
      // A text line starting with "# " is a comment of the document's code, not a heading.
      ['Manual > Installing packages', '# my personal functions\nmore text'],
    ]);
  });

  it('keeps the indentation of declared code lines and leaves undeclared lines as text', () => {
    const markdown = ['# API', '```python', 'def f():', '    return 1', '```', '    indented prose'].join('\n');
    const [chunk] = chunkDocument(
      { markdown, structure: { headings: [{ line: 0, level: 1, text: 'API' }], codeBlocks: [{ openingLine: 1, closingLine: 4 }] } },
      'api.html',
      options,
    );
    expect(chunk?.text).toBe('api.html > API\n\n```python\ndef f():\n    return 1\n```\nindented prose');
  });

  it('does not refuse a structured document for a line past the Markdown limit: the line is split', () => {
    const line = 'word '.repeat(50_000);
    const chunks = chunkDocument({ markdown: line, structure: { headings: [], codeBlocks: [] } }, 'genindex.html', options);
    expect(chunks.length).toBeGreaterThan(200);
    expect(chunks.every((chunk) => chunk.text.length <= 'genindex.html\n\n'.length + 1200)).toBe(true);
  });
});
