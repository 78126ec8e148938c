import { describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import { carriedTableHeader } from '../../src/chunking/table-header.ts';

const table = ['Intro line.', '| code | HTTP status |', '| --- | --- |', '| RAG_A | 400 |', '| RAG_B | 503 |'].join('\n');

describe('carriedTableHeader', () => {
  it('gives the header and separator rows to a chunk that starts inside the table', () => {
    expect(carriedTableHeader(table, table.indexOf('| RAG_B'))).toBe('| code | HTTP status |\n| --- | --- |');
  });

  it('gives nothing to a chunk that starts at the header, before the table, or mid-line', () => {
    expect(carriedTableHeader(table, table.indexOf('| code'))).toBeUndefined();
    expect(carriedTableHeader(table, 0)).toBeUndefined();
    expect(carriedTableHeader(table, table.indexOf('RAG_B'))).toBeUndefined();
  });

  it('gives nothing when the rows above have no separator row (not a table)', () => {
    const pipes = ['| a |', '| b |', '| c |'].join('\n');
    expect(carriedTableHeader(pipes, pipes.indexOf('| c'))).toBeUndefined();
  });
});

describe('a long table cut by the splitter', () => {
  it('repeats the header at the top of every later chunk, keeping chunk count and ids', () => {
    const rows = Array.from({ length: 40 }, (_, row) => `| RAG_CODE_${row} | ${400 + row} | a message that explains code ${row} |`);
    const markdown = ['# Errors', '', '| code | HTTP status | meaning |', '| --- | --- | --- |', ...rows].join('\n');
    const chunks = chunkMarkdown(markdown, 'errors.md', { chunkSize: 600, chunkOverlap: 100 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(chunk.text).toContain('errors.md > Errors\n\n| code | HTTP status | meaning |\n| --- | --- | --- |\n');
    expect(chunks.map((chunk) => chunk.chunkIndex)).toEqual(chunks.map((_, index) => index));
  });
});
