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

describe('HTML nesting, checked as the tree is built', () => {
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

  // The audit's bypasses: a `<div/>` opens a div in HTML (the parser ignores the slash outside SVG and
  // MathML), a `/>` inside a quoted attribute ends nothing, and `<body>` nests like any element. The
  // regex guard let 20,000 of each through, and the converter then died of stack overflow
  // (RAG_DOCUMENT_UNREADABLE).
  it.each([
    ['<div/>', '<div/>'],
    ['a quoted "/>"', '<div x="/>">'],
    ['<body>', '<body>'],
    ['<html>', '<html>'],
    ['<caption>', '<caption>'],
  ])('refuses 20,000 × %s up front as RAG_DOCUMENT_TOO_COMPLEX, not as a stack overflow', async (_name, tag) => {
    const page = `${tag.repeat(20_000)}text`;
    expect(() => assertHtmlWithinLimits(page)).toThrow(expect.objectContaining({ code: 'RAG_DOCUMENT_TOO_COMPLEX' }));
    await expect(new HtmlConverter().toMarkdown(Buffer.from(page))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_TOO_COMPLEX', message: /nested more than 256 deep/ });
  });

  it('counts the elements the tree holds open: `<div/>` and a quoted "/>" at the limit pass, one more is refused', () => {
    for (const tag of ['<div/>', '<div x="/>">', '<body>', '<span>']) {
      expect(() => assertHtmlWithinLimits(`${tag.repeat(DEFAULT_MAX_HTML_DEPTH)}x`)).not.toThrow();
      expect(() => assertHtmlWithinLimits(`${tag.repeat(DEFAULT_MAX_HTML_DEPTH + 1)}x`)).toThrow(expect.objectContaining({ code: 'RAG_DOCUMENT_TOO_COMPLEX' }));
    }
  });

  it('converts a page nested exactly to the limit and refuses one level more, through the converter', async () => {
    await expect(new HtmlConverter().toMarkdown(Buffer.from(nested(DEFAULT_MAX_HTML_DEPTH)))).resolves.toContain('x');
    await expect(new HtmlConverter().toMarkdown(Buffer.from(nested(DEFAULT_MAX_HTML_DEPTH + 1)))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_TOO_COMPLEX' });
  });

  it('closes `<x/>` inside SVG: an icon of 300 `<path/>` siblings in a page converts', async () => {
    const icon = `<svg viewBox="0 0 24 24">${'<path d="M0 0h24v24H0z"/>'.repeat(300)}</svg>`;
    const page = `<html><body><main><h1>Rotating keys</h1>${icon}<p>Rotate the signing keys every quarter.</p></main></body></html>`;
    expect(() => assertHtmlWithinLimits(page)).not.toThrow();
    const markdown = await new HtmlConverter().toMarkdown(Buffer.from(page));
    expect(markdown).toContain('# Rotating keys');
    expect(markdown).toContain('Rotate the signing keys every quarter.');
  });

  it('converts a deep but allowed page: 80 levels of section, ul and li under html, body and main (244 elements open)', async () => {
    const levels = 80;
    const opening = Array.from({ length: levels }, (_, level) => `<section id="s${level}"><ul><li>`).join('');
    const closing = '</li></ul></section>'.repeat(levels);
    const page = `<html><head><title>Deep</title></head><body><main><h1>Deep page</h1>${opening}<p>The innermost item names the retention period: ninety days.</p>${closing}</main></body></html>`;
    const markdown = await new HtmlConverter().toMarkdown(Buffer.from(page));
    expect(markdown).toContain('The innermost item names the retention period: ninety days.');
  });
});
