/**
 * HTML pages past INGEST_MAX_HTML_BYTES are refused before their tree is built (issue 43, finding 3: two 44 MB
 * pages each ran a worker to its 1,024 MiB heap limit for 18 s, and the job past the pod's 2 GiB).
 */
import { describe, expect, it } from 'vitest';
import { embeddedConverterOptions, HtmlConverter, maxHtmlBytesForHeap } from '../../src/ingestion.ts';
import { loadConfig } from '../../src/config.ts';

const page = (bytes: number): Buffer => {
  const body = '<p>Uptime and budgets, a paragraph of the page.</p>\n';
  const html = `<html><body>${body.repeat(Math.ceil(bytes / body.length))}`.slice(0, bytes - '</body></html>'.length);
  return Buffer.from(`${html}</body></html>`);
};

describe('the HTML size cap', () => {
  it('converts a page at the cap and refuses one byte more, with the size and the setting', async () => {
    const converter = new HtmlConverter({ maxBytes: 200_000 });
    await expect(converter.toMarkdown(page(200_000))).resolves.toContain('Uptime and budgets');
    await expect(converter.toMarkdown(page(200_001))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_TOO_COMPLEX', message: /0\.2 MB, past INGEST_MAX_HTML_BYTES: 0\.2 MB/ });
  });

  it('is checked before the page is parsed: a page past it and nested too deep is refused for its size', async () => {
    const deep = Buffer.from('<div>'.repeat(100_000));
    await expect(new HtmlConverter().toMarkdown(deep)).rejects.toMatchObject({ code: 'RAG_DOCUMENT_TOO_COMPLEX', message: /nested more than/ });
    await expect(new HtmlConverter({ maxBytes: 100_000 }).toMarkdown(deep)).rejects.toMatchObject({ code: 'RAG_DOCUMENT_TOO_COMPLEX', message: /INGEST_MAX_HTML_BYTES/ });
  });

  it('defaults to a 32nd of the workers heap (INGEST_CONVERT_MEMORY_MB): 33.5 MB for 1,024 MiB, so the audit’s 44 MB pages are refused', () => {
    expect(maxHtmlBytesForHeap(1024)).toBe(33_554_432);
    expect(embeddedConverterOptions(loadConfig({}))).toMatchObject({ maxHtmlBytes: 33_554_432 });
    expect(embeddedConverterOptions(loadConfig({ INGEST_CONVERT_MEMORY_MB: '512' }))).toMatchObject({ maxHtmlBytes: 16_777_216 });
    expect(embeddedConverterOptions(loadConfig({ INGEST_CONVERT_MEMORY_MB: '512', INGEST_MAX_HTML_BYTES: '1000' }))).toMatchObject({ maxHtmlBytes: 1000 });
    expect(maxHtmlBytesForHeap(1024)).toBeLessThan(44_000_000);
  });
});
