import pptxgenjs from 'pptxgenjs';
import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/chunking/chunk-markdown.ts';
import { createConverters, DoclingServeConverter, DocxConverter, HtmlConverter, MarkdownPassthrough, PdfConverter, PptxConverter } from '../../src/ingestion.ts';
import { blankPdf, corruptPdf, docxDocument, imageOnlyPdf, pdfWithText, pptxDeck } from './fixture-documents.ts';
import { HTML_PAGE } from './fixture-folder.ts';

// pptxgenjs is CommonJS: its class is the module itself under ESM (as fixture-documents.ts takes it).
const PptxGenJS = pptxgenjs as unknown as typeof pptxgenjs.default;

describe('HTML', () => {
  it('keeps headings, lists, tables and code as Markdown, not raw tags', async () => {
    const markdown = await new HtmlConverter().toMarkdown(Buffer.from(HTML_PAGE));

    expect(markdown).toContain('# Status page');
    expect(markdown).toContain('## Escalation');
    expect(markdown).toMatch(/^\* Page the on-call engineer$/m);
    expect(markdown).toMatch(/^\| severity \| response\s*\|$/m);
    expect(markdown).toContain('```bash\nkubectl rollout undo deploy/web\n```');
    expect(markdown).not.toMatch(/<\/?(h1|p|li|td|script)\b/);
    expect(markdown).not.toContain('track()');
  });
});

describe('DOCX', () => {
  it('keeps heading styles as Markdown headings, and tables', async () => {
    const markdown = await new DocxConverter().toMarkdown(await docxDocument());

    expect(markdown).toMatch(/^# Release handbook$/m);
    expect(markdown).toMatch(/^## Freezing the branch$/m);
    // Clean text: the bold run is text like the rest, no Markdown emphasis around it.
    expect(markdown).toContain('Freeze the release branch two days before.');
    expect(markdown).toMatch(/^\| freeze\s*\| release manager \|$/m);
  });

  it('names a file that is not a DOCX as unreadable', async () => {
    await expect(new DocxConverter().toMarkdown(Buffer.from('not a zip'))).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_UNREADABLE',
      message: expect.stringContaining('not a readable DOCX'),
    });
  });
});

describe('PPTX', () => {
  it('makes one ## section per slide, headed by its title, in presentation order', async () => {
    const markdown = await new PptxConverter().toMarkdown(await pptxDeck());

    expect(markdown.match(/^## .*$/gm)).toEqual(['## Quarterly roadmap', '## Risks & mitigations', '## Slide 3']);
    expect(markdown).toContain('Ship the ingestion job');
    expect(markdown).toContain('| GCS outage | retry next run |');
    expect(markdown).toContain('A slide without a title');
  });

  it("gives its structure: a slide's text line starting with '#' is text, not a heading; table cells are not escaped", async () => {
    const deck = new PptxGenJS();
    const slide = deck.addSlide();
    slide.addText('Release steps', { x: 0.5, y: 0.3, w: 9, h: 1 });
    slide.addText('# run the smoke tests first', { x: 0.5, y: 1.5, w: 9, h: 1 });
    slide.addTable([[{ text: 'flag' }, { text: 'meaning' }], [{ text: 'a|b' }, { text: 'either' }]], { x: 0.5, y: 3, w: 9 });
    const converted = await new PptxConverter().toPagedMarkdown((await deck.write({ outputType: 'nodebuffer' })) as Buffer);
    const chunks = chunkDocument(converted, 'deck.pptx', { chunkSize: 1200, chunkOverlap: 200 });
    expect(chunks.map((chunk) => chunk.headingPath)).toEqual(['Slide 1']);
    expect(chunks[0]!.text).toContain('# run the smoke tests first');
    expect(chunks[0]!.text).toContain('| a|b | either |');
  });

  it('names a file that is not a PPTX as unreadable', async () => {
    await expect(new PptxConverter().toMarkdown(Buffer.from('PK not really'))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_UNREADABLE' });
  });
});

describe('PDF', () => {
  it('extracts the text of every page', async () => {
    const markdown = await new PdfConverter().toMarkdown(await pdfWithText(['Page one talks about uptime.', 'Page two talks about budgets.']));

    // A page end is a line break, not a paragraph break: text runs on over it (pdf/paged-document.ts).
    expect(markdown).toBe('Page one talks about uptime.\nPage two talks about budgets.\n');
  });

  it.each([
    ['an image-only (scanned) PDF', imageOnlyPdf, 'no extractable text (scanned or image-only PDF?)'],
    ['a blank PDF', blankPdf, 'no extractable text (scanned or image-only PDF?)'],
    ['a corrupt PDF', async () => corruptPdf(), 'not a readable PDF'],
    ['an empty file', async () => Buffer.alloc(0), 'empty file'],
  ])('refuses %s with the reason', async (_name, make, reason) => {
    await expect(new PdfConverter().toMarkdown(await make())).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_UNREADABLE',
      message: expect.stringContaining(reason),
    });
  });
});

describe('createConverters', () => {
  it('converts every supported format with embedded converters when DOCLING_URL is unset', () => {
    const registry = createConverters({ DOCLING_URL: undefined, DOCLING_API_KEY: undefined, DOCLING_TIMEOUT_MS: 600_000 });

    expect(registry.extensions).toEqual(['docx', 'htm', 'html', 'markdown', 'md', 'pdf', 'pptx']);
    expect(registry.forDocument('a/b.PDF')).toBeInstanceOf(PdfConverter);
    expect(registry.forDocument('notes.txt')).toBeUndefined();
  });

  it('sends PDF, DOCX and PPTX to docling-serve when DOCLING_URL is set, and reads Markdown and HTML directly', () => {
    const registry = createConverters({ DOCLING_URL: 'http://docling:5001', DOCLING_API_KEY: undefined, DOCLING_TIMEOUT_MS: 600_000 });

    for (const name of ['a.pdf', 'b.docx', 'c.pptx']) expect(registry.forDocument(name)).toBeInstanceOf(DoclingServeConverter);
    expect(registry.forDocument('d.html')).toBeInstanceOf(HtmlConverter);
    expect(registry.forDocument('e.md')).toBeInstanceOf(MarkdownPassthrough);
  });
});
