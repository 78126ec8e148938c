import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/chunking/chunk-markdown.ts';
import { DoclingServeConverter } from '../../src/ingestion.ts';
import { converted, FakeDoclingServer, type DoclingAnswer } from './fake-docling-server.ts';

/**
 * docling-serve's answer for a five-page PDF whose page 4 holds no body item, made by docling-core itself
 * (see make-docling-answer.py): its Markdown has docling's page-break placeholders where docling writes them
 * (docling_core/transforms/serializer/common.py, `_iterate_items`), its JSON each item's `prov[].page_no`.
 */
const ANSWER = JSON.parse(await readFile(new URL('../fixtures/pages/docling-answer.json', import.meta.url), 'utf8')) as {
  document: { md_content: string; json_content: { texts: Array<{ text: string; content_layer: string; prov: Provenance[] }>; pictures: Array<{ prov: Provenance[] }> } };
};

/** docling_core's ProvenanceItem (types/doc/common/reference.py), its bbox a BoundingBox (types/doc/base.py). */
interface Provenance {
  page_no: number;
  bbox: { l: number; t: number; r: number; b: number; coord_origin: 'TOPLEFT' | 'BOTTOMLEFT' };
}

/** docling's own conversion of a four-slide deck (slide 3 empty, slide 4 untitled): see make-docling-answer.py. */
const PPTX_ANSWER = JSON.parse(await readFile(new URL('../fixtures/pages/docling-pptx-answer.json', import.meta.url), 'utf8')) as { document: { md_content: string } };

let server: FakeDoclingServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function converterAnswering(answer: DoclingAnswer): Promise<{ converter: DoclingServeConverter; server: FakeDoclingServer }> {
  server = await new FakeDoclingServer(() => answer).start();
  return { converter: new DoclingServeConverter({ url: server.baseUrl }), server };
}

describe('docling-serve page numbers', () => {
  it('asks for the Markdown with page-break placeholders and the JSON document', async () => {
    const { converter, server } = await converterAnswering({ status: 200, body: ANSWER });

    await converter.toPagedMarkdown(Buffer.from('%PDF-1.7'), 'manuals/pump-station.pdf');

    // Form fields of docling-serve's ConvertDocumentsRequestOptions (docling/datamodel/service/options.py).
    const form = server.requests[0]!.form;
    expect(form.getAll('to_formats')).toEqual(['md', 'json']);
    expect(form.get('md_page_break_placeholder')).toBe('<!-- rag-page-break -->');
  });

  it('places each page at its first body item, skipping a page without any, with no placeholder left', async () => {
    const { converter } = await converterAnswering({ status: 200, body: ANSWER });

    const { markdown, pages } = await converter.toPagedMarkdown(Buffer.from('%PDF-1.7'), 'pump-station.pdf');

    expect(markdown).not.toContain('rag-page-break');
    expect(pages!.map(({ page, offset }) => [page, markdown.slice(offset).split('\n')[0]])).toEqual([
      [1, '## Pump station manual'],
      [2, '### Lubrication'],
      [3, 'Osprey filters are due at half a bar of differential pressure.'],
      // Entities are unescaped before the offsets are taken.
      [5, '### Alarms & codes'],
    ]);
    expect(await converter.toMarkdown(Buffer.from('%PDF-1.7'), 'pump-station.pdf')).toBe(markdown);
  });

  it('gives each chunk the pages of the docling items its text holds', async () => {
    const { converter } = await converterAnswering({ status: 200, body: ANSWER });
    const { markdown, pages } = await converter.toPagedMarkdown(Buffer.from('%PDF-1.7'), 'pump-station.pdf');

    const chunks = chunkMarkdown(markdown, 'pump-station.pdf', { chunkSize: 1200, chunkOverlap: 200 }, pages);

    const bodyItems = ANSWER.document.json_content.texts.filter((item) => item.content_layer === 'body');
    for (const chunk of chunks) {
      const body = chunk.text.slice(chunk.text.indexOf('\n\n') + 2);
      const itemPages = [...new Set(bodyItems.filter((item) => body.includes(item.text)).map((item) => item.prov[0]!.page_no))].sort();
      expect(chunk.pages, chunk.headingPath).toEqual(itemPages);
    }
    // The Lubrication section runs from the list on page 2 to the text on page 3.
    expect(chunks.map((chunk) => chunk.pages)).toEqual([[1], [2, 3], [5]]);
  });

  it('gives each chunk the boxes of the docling items its text holds: each item\'s prov page and bbox', async () => {
    const { converter } = await converterAnswering({ status: 200, body: ANSWER });
    const { markdown, pages, boxes } = await converter.toPagedMarkdown(Buffer.from('%PDF-1.7'), 'pump-station.pdf');

    const chunks = chunkMarkdown(markdown, 'pump-station.pdf', { chunkSize: 1200, chunkOverlap: 200 }, pages, boxes);

    const { texts, pictures } = ANSWER.document.json_content;
    const bodyTexts = texts.filter((item) => item.content_layer === 'body');
    const boxesOf = (prov: Provenance[]) => prov.map(({ page_no, bbox: { l, t, r, b, coord_origin } }) => ({ page: page_no, l, t, r, b, origin: coord_origin }));
    for (const chunk of chunks) {
      const body = chunk.text.slice(chunk.text.indexOf('\n\n') + 2);
      // docling's image placeholder is no text of the document: it is left out of the chunks, and with it the
      // picture, which no chunk's text then holds.
      expect(body).not.toContain('<!-- image -->');
      const held = bodyTexts.filter((item) => body.includes(item.text));
      expect(chunk.boxes, chunk.headingPath).toEqual(held.flatMap((item) => boxesOf(item.prov)));
    }
    expect(pictures).toHaveLength(1);
    // A paragraph; two list items and a paragraph; a paragraph. The headings are in the chunks' heading paths,
    // not their text, and place no box, as they place no page.
    expect(chunks.map((chunk) => chunk.boxes!.map((box) => `${box.page}@${box.t}`))).toEqual([['1@200'], ['2@200', '2@260', '3@100'], ['5@200']]);
  });

  it('places a PPTX\'s slides by their items, though docling writes each break after the slide it should precede', async () => {
    // docling's PPTX backend makes each slide a group, written whole before the break its first item brings.
    expect(PPTX_ANSWER.document.md_content).toMatch(/retry on the next run \|\n\n<!-- rag-page-break -->\n\nHire two osprey engineers in the autumn.\n\n<!-- rag-page-break -->$/);
    const { converter } = await converterAnswering({ status: 200, body: PPTX_ANSWER });

    const { markdown, pages } = await converter.toPagedMarkdown(Buffer.from('PK'), 'plan.pptx');

    // Slide 3 is empty: docling gives it no item.
    expect(pages!.map(({ page, offset }) => [page, markdown.slice(offset).split('\n')[0]])).toEqual([
      [1, '# Quarterly roadmap'],
      [2, '# Risks & mitigations'],
      [4, 'Hire two osprey engineers in the autumn.'],
    ]);
    const chunks = chunkMarkdown(markdown, 'plan.pptx', { chunkSize: 1200, chunkOverlap: 200 }, pages);
    // The untitled slide 4 falls under slide 2's heading in docling's Markdown: that chunk touches both.
    expect(chunks.map((chunk) => [chunk.headingPath, chunk.pages])).toEqual([
      ['Quarterly roadmap', [1]],
      ['Risks & mitigations', [2, 4]],
    ]);
  });

  it('numbers the pages between the placeholders from 1 when the server sends no JSON document', async () => {
    const { converter } = await converterAnswering(converted('one\n\n<!-- rag-page-break -->\n\ntwo\n\n<!-- rag-page-break -->'));

    const { markdown, pages } = await converter.toPagedMarkdown(Buffer.from('%PDF-1.7'), 'a.pdf');

    expect(markdown).toBe('one\n\ntwo\n\n');
    expect(pages).toEqual([{ page: 1, offset: 0 }, { page: 2, offset: 5 }]);
  });

  it('gives a DOCX no pages: docling gives its items no page', async () => {
    const { converter } = await converterAnswering(converted('# Release handbook\n\nFreeze the branch.'));

    const paged = await converter.toPagedMarkdown(Buffer.from('PK'), 'handbook.docx');

    expect(paged.markdown).toBe('# Release handbook\n\nFreeze the branch.');
    expect(paged.pages).toBeUndefined();
    expect(converter.pagedExtensions).toEqual(['pdf', 'pptx']);
  });
});
