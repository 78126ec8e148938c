import { describe, expect, it } from 'vitest';
import { assertHtmlWithinLimits, DEFAULT_MAX_HTML_DEPTH } from '../../src/converters/html-limits.ts';
import { HtmlConverter, MarkdownPassthrough } from '../../src/ingestion.ts';

describe('binary content under a text extension', () => {
  const markdown = new MarkdownPassthrough();

  it('is refused as RAG_DOCUMENT_UNREADABLE: NUL bytes, mostly undecodable bytes, control characters, UTF-16', async () => {
    await expect(markdown.toMarkdown(Buffer.from('# Title\n\0\0\0binary'))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_UNREADABLE', message: /NUL bytes/ });
    await expect(markdown.toMarkdown(Buffer.from(Array.from({ length: 1000 }, (_, index) => 0x80 + (index % 64))))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_UNREADABLE', message: /not UTF-8 text/ });
    await expect(markdown.toMarkdown(Buffer.from('\x01\x02\x03\x04'.repeat(100)))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_UNREADABLE' });
    await expect(markdown.toMarkdown(Buffer.from('\ufeff# Title', 'utf16le'))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_UNREADABLE', message: /UTF-16/ });
    await expect(new HtmlConverter().toMarkdown(Buffer.from('<p>\0\0</p>'))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_UNREADABLE' });
  });

  it('lets text through: UTF-8 of any script, and a Latin-1 page with its accents lost', async () => {
    await expect(markdown.toMarkdown(Buffer.from('# Café\n\nΚαλημέρα, 日本語, emoji 🎉\tand tabs\r\n'))).resolves.toContain('日本語');
    await expect(markdown.toMarkdown(Buffer.from('Le café de la gare ouvre à sept heures, même le dimanche. '.repeat(50), 'latin1'))).resolves.toContain('gare');
    await expect(markdown.toMarkdown(Buffer.alloc(0))).resolves.toBe('');
  });
});

describe('HTML nesting, checked before parsing', () => {
  const nested = (depth: number, tag = 'div'): string => `${`<${tag}>`.repeat(depth)}x${`</${tag}>`.repeat(depth)}`;

  it('takes elements nested exactly to the limit and refuses one level more', () => {
    expect(() => assertHtmlWithinLimits(nested(DEFAULT_MAX_HTML_DEPTH))).not.toThrow();
    expect(() => assertHtmlWithinLimits(nested(DEFAULT_MAX_HTML_DEPTH + 1))).toThrow(expect.objectContaining({ code: 'RAG_DOCUMENT_TOO_COMPLEX' }));
    expect(() => assertHtmlWithinLimits('<span>'.repeat(DEFAULT_MAX_HTML_DEPTH + 1))).toThrow(/nested more than 256 deep/);
  });

  it('does not count closed siblings, void elements, optional end tags, comments or script text', () => {
    const page = `<html><body>${'<div><p>one<p>two<br><img src=x><li>item</div>'.repeat(10_000)}<!-- ${'<div>'.repeat(1000)} --><script>${"'<div>'".repeat(1000)}</script></body></html>`;
    expect(() => assertHtmlWithinLimits(page)).not.toThrow();
  });

  it('refuses a deeply nested page through the converter', async () => {
    await expect(new HtmlConverter().toMarkdown(Buffer.from('<div>'.repeat(200_000)))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_TOO_COMPLEX' });
  });
});
