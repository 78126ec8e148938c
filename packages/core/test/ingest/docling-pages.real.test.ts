/**
 * Slide numbers from the real docling-serve (the release pinned in scripts/python/docling.txt), beside the
 * embedded PPTX converter's. docling gives each item of a slide `prov[].page_no` = the slide's position + 1
 * (docling/backend/mspowerpoint_backend.py) and writes `md_page_break_placeholder` where the next item is on a
 * later page (docling_core/transforms/serializer/common.py, `_iterate_items`); DoclingServeConverter asks for
 * both (docling-pages.ts). PDF pages are not converted here: docling's layout models cannot be fetched on
 * these machines (see docling-serve.real.test.ts); the PDF side is docling-pages.test.ts, against an answer
 * made by docling-core itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pptxgenjs from 'pptxgenjs';
import { chunkMarkdown, type Chunk } from '../../src/index.ts';
import { DoclingServeConverter, PptxConverter, type Converter } from '../../src/ingestion.ts';
import { startDoclingServe, type DoclingServe } from '../real/docling-serve.ts';
import { realComponentSkipReason, venvPython } from '../real/real-components.ts';
import { pptxDeck } from './fixture-documents.ts';

const PptxGenJS = pptxgenjs as unknown as typeof pptxgenjs.default;

const python = venvPython('docling');
const skipReason = realComponentSkipReason('docling-pages.real.test.ts', python ? undefined : 'no docling-serve environment (.cache/py/docling from scripts/python/docling.txt)');

const CHUNKING = { chunkSize: 1200, chunkOverlap: 200 };

/** Four slides, the third empty (nothing on it, so docling gives it no item and no page break). */
async function deckWithAnEmptySlide(): Promise<{ bytes: Buffer; slideTexts: string[] }> {
  const slideTexts = ['Ship the kestrel ingestion job by March.', 'Heron outage: retry on the next run.', '', 'Hire two osprey engineers in the autumn.'];
  const deck = new PptxGenJS();
  for (const text of slideTexts) {
    const slide = deck.addSlide();
    if (text !== '') slide.addText(text, { x: 0.5, y: 1.5, w: 9, h: 1 });
  }
  return { bytes: (await deck.write({ outputType: 'nodebuffer' })) as Buffer, slideTexts };
}

async function chunksVia(converter: Converter, bytes: Buffer, name: string): Promise<Chunk[]> {
  const { markdown, pages } = await converter.toPagedMarkdown!(bytes, name);
  return chunkMarkdown(markdown, name, CHUNKING, pages);
}

describe.skipIf(skipReason !== undefined)('slide numbers from the real docling-serve', () => {
  let docling: DoclingServe;
  let converter: DoclingServeConverter;

  beforeAll(async () => {
    docling = await startDoclingServe(python!);
    converter = new DoclingServeConverter({ url: docling.url, retries: 0, timeoutMs: 120_000 });
  }, 300_000);

  afterAll(async () => {
    await docling?.close();
  });

  it('gives each chunk the slides whose text it holds, an empty slide skipped, as the embedded converter does', async () => {
    const { bytes, slideTexts } = await deckWithAnEmptySlide();

    const viaDocling = await chunksVia(converter, bytes, 'plan.pptx');
    const viaEmbedded = await chunksVia(new PptxConverter(), bytes, 'plan.pptx');
    console.log('docling-pages.real: docling chunks', viaDocling.map((chunk) => [chunk.text, chunk.pages]));

    for (const chunks of [viaDocling, viaEmbedded]) {
      for (const chunk of chunks) {
        const slides = slideTexts.flatMap((text, index) => (text !== '' && chunk.text.includes(text) ? [index + 1] : []));
        expect(chunk.pages, chunk.text).toEqual(slides);
      }
      expect(chunks.flatMap((chunk) => chunk.pages)).toEqual([1, 2, 4]);
    }
  }, 180_000);

  it('cites an untitled slide docling files under the slide before it with both slides', async () => {
    const viaDocling = await chunksVia(converter, await pptxDeck(), 'roadmap.pptx');

    // docling gives the third, untitled slide no heading (docling-serve.real.test.ts): its text joins the second slide's chunk.
    expect(viaDocling.map((chunk) => [chunk.headingPath, chunk.pages])).toEqual([
      ['Quarterly roadmap', [1]],
      ['Risks & mitigations', [2, 3]],
    ]);
  }, 180_000);
});
