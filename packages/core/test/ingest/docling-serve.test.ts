import { afterEach, describe, expect, it } from 'vitest';
import { DoclingServeConverter } from '../../src/ingestion.ts';
import { converted, FakeDoclingServer, type DoclingAnswer } from './fake-docling-server.ts';

let server: FakeDoclingServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function startDocling(answer: (attempt: number) => DoclingAnswer): Promise<FakeDoclingServer> {
  server = await new FakeDoclingServer((_request, attempt) => answer(attempt)).start();
  return server;
}

describe('docling-serve converter', () => {
  it('posts the file as multipart with to_formats=md and the API key, and returns md_content', async () => {
    const docling = await startDocling(() => converted('# Quarterly report\n\n| a | b |\n'));
    const converter = new DoclingServeConverter({ url: `${docling.baseUrl}/`, apiKey: 'docling-secret' });

    const markdown = await converter.toMarkdown(Buffer.from('%PDF-1.7 bytes'), 'reports/q3.pdf');

    expect(markdown).toBe('# Quarterly report\n\n| a | b |\n');
    const [request] = docling.requests;
    expect(request!.path).toBe('/v1/convert/file');
    expect(request!.headers['x-api-key']).toBe('docling-secret');
    expect(request!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const file = request!.form.get('files') as File;
    expect(file.name).toBe('q3.pdf');
    expect(Buffer.from(await file.arrayBuffer()).toString()).toBe('%PDF-1.7 bytes');
    // The document's JSON comes too, for its items' pages (see docling-pages.test.ts).
    expect(request!.form.getAll('to_formats')).toEqual(['md', 'json']);
    expect(request!.form.get('image_export_mode')).toBe('placeholder');
  });

  it('sends no API key header when none is configured', async () => {
    const docling = await startDocling(() => converted('text'));

    await new DoclingServeConverter({ url: docling.baseUrl }).toMarkdown(Buffer.from('x'), 'a.docx');

    expect(docling.requests[0]!.headers['x-api-key']).toBeUndefined();
  });

  it.each(['failure', 'skipped'])('names a document docling reports as %s unreadable, with its errors', async (status) => {
    const docling = await startDocling(() => ({
      status: 200,
      body: { document: { md_content: '' }, status, errors: [{ component_type: 'document_backend', module_name: 'pdf', error_message: 'Input document is not valid' }] },
    }));

    await expect(new DoclingServeConverter({ url: docling.baseUrl }).toMarkdown(Buffer.from('x'), 'a.pdf')).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_UNREADABLE',
      message: expect.stringContaining(`docling-serve: ${status}: Input document is not valid`),
    });
  });

  it('turns the HTML escapes of docling text back into characters, but not inside code', async () => {
    // docling_core's Markdown serializer: html.escape(text, quote=False) for text, never for code or formulas.
    const docling = await startDocling(() =>
      converted('# Risks &amp; mitigations\n\n| a &lt; b | x &gt; y |\n\nwritten &amp;lt; as is, `a &amp;&amp; b`\n\n```\nif a &amp;&amp; b\n```\n'),
    );

    const markdown = await new DoclingServeConverter({ url: docling.baseUrl }).toMarkdown(Buffer.from('x'), 'a.pptx');

    expect(markdown).toBe('# Risks & mitigations\n\n| a < b | x > y |\n\nwritten &lt; as is, `a &amp;&amp; b`\n\n```\nif a &amp;&amp; b\n```\n');
  });

  it('keeps the Markdown of a partial success', async () => {
    const docling = await startDocling(() => ({ status: 200, body: { document: { md_content: 'page 1 only' }, status: 'partial_success', errors: [] } }));

    expect(await new DoclingServeConverter({ url: docling.baseUrl }).toMarkdown(Buffer.from('x'), 'a.pdf')).toBe('page 1 only');
  });

  it('retries a busy server (503) and then converts', async () => {
    const docling = await startDocling((attempt) => (attempt === 1 ? { status: 503, body: { detail: 'busy' } } : converted('done')));

    const markdown = await new DoclingServeConverter({ url: docling.baseUrl, minBackoffMs: 1 }).toMarkdown(Buffer.from('x'), 'a.pptx');

    expect(markdown).toBe('done');
    expect(docling.requests).toHaveLength(2);
  });

  it('reports an unreachable server as RAG_CONVERTER_UNAVAILABLE', async () => {
    const docling = await startDocling(() => converted('never'));
    const url = docling.baseUrl;
    await docling.close();
    server = undefined;

    await expect(new DoclingServeConverter({ url, retries: 0 }).toMarkdown(Buffer.from('x'), 'a.pdf')).rejects.toMatchObject({
      code: 'RAG_CONVERTER_UNAVAILABLE',
      message: expect.stringContaining('is unreachable'),
    });
  });
});
