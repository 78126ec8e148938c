import { describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import { assertMarkdownWithinLimits, DEFAULT_MARKDOWN_LIMITS } from '../../src/chunking/markdown-limits.ts';

const { maxChars, maxLineChars, maxNesting } = DEFAULT_MARKDOWN_LIMITS;

function nestedList(depth: number): string {
  return Array.from({ length: depth }, (_, level) => `${'  '.repeat(level)}- level ${level}`).join('\n');
}

function refusal(markdown: string): string | undefined {
  try {
    assertMarkdownWithinLimits(markdown);
    return undefined;
  } catch (error) {
    return `${(error as { code?: string }).code}`;
  }
}

describe('Markdown limits, checked before parsing', () => {
  it('takes a document of exactly the limit in characters and refuses one more', () => {
    const lines = `${'a'.repeat(99)}\n`.repeat(maxChars / 100);
    expect(refusal(lines)).toBeUndefined();
    expect(refusal(`${lines}a`)).toBe('RAG_DOCUMENT_TOO_COMPLEX');
  });

  it('takes a line of exactly the limit and refuses one character more', () => {
    expect(refusal(`# Title\n${'a'.repeat(maxLineChars)}\n`)).toBeUndefined();
    expect(refusal(`# Title\n${'a'.repeat(maxLineChars + 1)}\n`)).toBe('RAG_DOCUMENT_TOO_COMPLEX');
  });

  it('takes blockquotes and lists nested exactly to the limit and refuses one level more', () => {
    expect(refusal(`${'>'.repeat(maxNesting)} quoted`)).toBeUndefined();
    expect(refusal(`${'>'.repeat(maxNesting + 1)} quoted`)).toBe('RAG_DOCUMENT_TOO_COMPLEX');
    expect(refusal(nestedList(maxNesting))).toBeUndefined();
    expect(refusal(nestedList(maxNesting + 1))).toBe('RAG_DOCUMENT_TOO_COMPLEX');
    expect(refusal(`${'- '.repeat(maxNesting + 1)}item`)).toBe('RAG_DOCUMENT_TOO_COMPLEX');
    expect(refusal(`${'> - '.repeat(maxNesting / 2 + 1)}item`)).toBe('RAG_DOCUMENT_TOO_COMPLEX');
  });

  it('counts nothing inside fenced code, nor list items a later line closed', () => {
    const yaml = Array.from({ length: maxNesting + 10 }, (_, level) => `${'  '.repeat(level)}- key${level}:`).join('\n');
    expect(refusal(`# Config\n\n\`\`\`yaml\n${yaml}\n\`\`\`\n`)).toBeUndefined();
    const manyShallowLists = Array.from({ length: 500 }, () => nestedList(10)).join('\n\nParagraph.\n\n');
    expect(refusal(manyShallowLists)).toBeUndefined();
  });

  it('still chunks a real nested document, and refuses a hostile one inside chunkMarkdown', () => {
    expect(chunkMarkdown(`# Steps\n\n${nestedList(8)}\n\n> a quote\n> > nested\n`, 'x.md', { chunkSize: 1200, chunkOverlap: 200 })).toHaveLength(1);
    expect(() => chunkMarkdown(`${'>'.repeat(100_000)} x`, 'x.md', { chunkSize: 1200, chunkOverlap: 200 })).toThrow(/nested 100000 deep/);
  });
});
