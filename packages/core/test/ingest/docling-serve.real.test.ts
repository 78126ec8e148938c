/**
 * DoclingServeConverter against the real docling-serve (the release pinned in scripts/python/docling.txt),
 * compared with the embedded converters on the same documents, then one ingest through it.
 *
 * What must agree between the two modes: the heading texts, the key text, the chunks' heading paths and their
 * count's order of magnitude. What differs is printed (`docling vs embedded`) and explained in docs/ingestion.md
 * ("docling-serve against the embedded converters").
 *
 * API: https://github.com/docling-project/docling-serve/blob/main/docs/usage.md (POST /v1/convert/file,
 * `document.md_content`); the sync endpoint answers 404 "Task result not found" when the conversion task failed
 * (docling_serve/app.py, process_file); with DOCLING_SERVE_API_KEY set, a request without the right `X-Api-Key`
 * gets 401 (docling_serve/auth.py, APIKeyAuth).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkMarkdown, type Chunk } from '../../src/index.ts';
import { DoclingServeConverter, DocxConverter, HtmlConverter, PptxConverter, type Converter } from '../../src/ingestion.ts';
import { startDoclingServe, type DoclingServe } from '../real/docling-serve.ts';
import { realComponentSkipReason, venvPython } from '../real/real-components.ts';
import { docxDocument, pdfWithText, pptxDeck } from './fixture-documents.ts';
import { runIngestCli } from '../../../../ingest/test/ingest-cli.ts';
import { guide, HTML_PAGE } from './fixture-folder.ts';

const python = venvPython('docling');
const skipReason = realComponentSkipReason(
  'docling-serve.real.test.ts',
  python ? undefined : 'no docling-serve environment (.cache/py/docling from scripts/python/docling.txt)',
);

/** The server requires it, as the deployment's does (k8s/rag/docling/docling-serve.yaml). */
const API_KEY = 'docling-real-test-key';
/** The ingest job's defaults (CHUNK_SIZE, CHUNK_OVERLAP). */
const CHUNKING = { chunkSize: 1200, chunkOverlap: 200 };

interface Fixture {
  name: string;
  bytes: () => Promise<Buffer>;
  embedded: Converter;
}

const DOCX: Fixture = { name: 'handbook.docx', bytes: docxDocument, embedded: new DocxConverter() };
const PPTX: Fixture = { name: 'roadmap.pptx', bytes: pptxDeck, embedded: new PptxConverter() };
const HTML: Fixture = { name: 'status.html', bytes: async () => Buffer.from(HTML_PAGE), embedded: new HtmlConverter() };

interface Side {
  markdown: string;
  headings: string[];
  chunks: Chunk[];
}

describe.skipIf(skipReason !== undefined)('DoclingServeConverter against the real docling-serve', () => {
  let docling: DoclingServe;
  let converter: DoclingServeConverter;

  beforeAll(async () => {
    docling = await startDoclingServe(python!, { apiKey: API_KEY });
    converter = new DoclingServeConverter({ url: docling.url, apiKey: API_KEY, retries: 0, timeoutMs: 120_000 });
  });

  afterAll(async () => {
    await docling?.close();
  });

  /** Both conversions of a fixture, their headings and their chunks; the differences are printed. */
  async function compare(fixture: Fixture): Promise<{ docling: Side; embedded: Side }> {
    const bytes = await fixture.bytes();
    const viaDocling = await converter.toMarkdown(bytes, fixture.name);
    const viaEmbedded = await fixture.embedded.toMarkdown(bytes, fixture.name);
    const sides = { docling: side(viaDocling, fixture.name), embedded: side(viaEmbedded, fixture.name) };
    console.log(`docling vs embedded, ${fixture.name}:\n--- docling\n${viaDocling}\n--- embedded\n${viaEmbedded}\n--- chunks ${sides.docling.chunks.length} vs ${sides.embedded.chunks.length}`);
    return sides;
  }

  it('DOCX: the same headings one level down, the same text, list and table, the same chunks', async () => {
    const { docling: d, embedded: e } = await compare(DOCX);

    // docling puts Word's Heading 1 at `##` and Heading 2 at `###`; mammoth at `#` and `##`.
    expect(d.headings).toEqual(['## Release handbook', '### Freezing the branch']);
    expect(e.headings).toEqual(['# Release handbook', '## Freezing the branch']);
    // Clean chunk text on both sides: the bold run of "Freeze the **release branch**" is plain text (clean-markdown.ts).
    for (const text of ['How a release is cut and shipped.', 'Freeze the release branch two days before.', 'Run the smoke tests']) {
      expect(d.markdown).toContain(text);
      expect(e.markdown).toContain(text);
    }
    expect(d.markdown).toMatch(/^\| freeze +\| release manager +\|$/m);
    // The heading path ignores the level, so both modes give the same sections and chunk count.
    expect(headingPaths(d.chunks)).toEqual(headingPaths(e.chunks));
    expect(headingPaths(d.chunks)).toEqual(['Release handbook', 'Release handbook > Freezing the branch']);
  });

  it('PPTX: a `#` heading per titled slide and the table; an untitled slide has no heading of its own', async () => {
    const { docling: d, embedded: e } = await compare(PPTX);

    expect(d.headings).toEqual(['# Quarterly roadmap', '# Risks & mitigations']);
    expect(e.headings).toEqual(['## Quarterly roadmap', '## Risks & mitigations', '## Slide 3']);
    for (const text of ['Ship the ingestion job', 'A slide without a title']) {
      expect(d.markdown).toContain(text);
      expect(e.markdown).toContain(text);
    }
    expect(d.markdown).toMatch(/^\| GCS outage +\| retry next run +\|$/m);
    // docling's untitled slide falls under the slide before it: one chunk fewer, and that text is cited as
    // "Risks & mitigations" instead of "Slide 3".
    expect(headingPaths(d.chunks)).toEqual(['Quarterly roadmap', 'Risks & mitigations']);
    expect(headingPaths(e.chunks)).toEqual(['Quarterly roadmap', 'Risks & mitigations', 'Slide 3']);
    expect(d.chunks[1]!.text).toContain('A slide without a title');
  });

  it('HTML: the same headings, list, table and code; the code fence loses its language', async () => {
    const { docling: d, embedded: e } = await compare(HTML);

    expect(d.headings).toEqual(e.headings);
    expect(d.headings).toEqual(['# Status page', '## Escalation']);
    for (const text of ['Every incident is posted here within ten minutes.', 'Page the on-call engineer', 'kubectl rollout undo deploy/web']) {
      expect(d.markdown).toContain(text);
      expect(e.markdown).toContain(text);
    }
    expect(d.markdown).toMatch(/^\| sev1 +\| 15 minutes +\|$/m);
    expect(d.markdown).toContain('```\nkubectl rollout undo deploy/web\n```');
    expect(e.markdown).toContain('```bash\nkubectl rollout undo deploy/web\n```');
    expect(headingPaths(d.chunks)).toEqual(headingPaths(e.chunks));
  });

  it('is refused without its API key (HTTP 401), as a failing converter', async () => {
    const bytes = await DOCX.bytes();

    for (const apiKey of [undefined, 'not-the-key']) {
      await expect(new DoclingServeConverter({ url: docling.url, apiKey, retries: 0 }).toMarkdown(bytes, DOCX.name)).rejects.toMatchObject({
        code: 'RAG_CONVERTER_UNAVAILABLE',
        message: expect.stringContaining('HTTP 401'),
      });
    }
  });

  it('PDF: not converted here (no layout models); a server without them is reported as failing, not as an empty document', async () => {
    // docling's PDF pipeline needs its layout, table-structure and OCR weights, which no model hub can provide on
    // these machines (HF_HUB_OFFLINE=1). What a user of such a server sees is checked; the conversion is not.
    console.warn('docling-serve.real.test.ts: PDF conversion not compared: docling layout models cannot be fetched here (no model hub); only the failure is checked');
    const pdf = await pdfWithText(['Quarterly report: uptime was 99.95 percent.']);

    await expect(converter.toMarkdown(pdf, 'report.pdf')).rejects.toMatchObject({
      code: 'RAG_CONVERTER_UNAVAILABLE',
      message: expect.stringContaining('HTTP 404'),
    });
    expect(docling.output()).toContain('outgoing traffic has been disabled');
  });

  it('ingests a folder through it: done line with every document and no error, chunks as docling made them', async () => {
    const corpus = await mkdtemp(join(tmpdir(), 'rag-docling-corpus-'));
    const dataDir = await mkdtemp(join(tmpdir(), 'rag-docling-data-'));
    try {
      const fixtures = [DOCX, PPTX, HTML];
      for (const fixture of fixtures) await writeFile(join(corpus, fixture.name), await fixture.bytes());
      await writeFile(join(corpus, 'guide.md'), guide(3));
      // HTML and Markdown are read directly in both modes; DOCX and PPTX go to docling-serve.
      const expected = await expectedChunkCounts(fixtures, converter);
      expect(expected.docling, 'the fixtures must chunk differently, or the count proves nothing').not.toBe(expected.embedded);

      // CHUNK_MIN_CHARS 0: the job cuts at the seed's boundaries, as CHUNKING does for the expected counts.
      const run = await runIngestCli(dataDir, [corpus], { DOCLING_URL: docling.url, DOCLING_API_KEY: API_KEY, CHUNK_MIN_CHARS: '0' });

      expect(run.stderr).not.toContain('failed:');
      expect(run.lastLine).toBe(`done: 4 files, ${expected.docling} chunks, ${expected.docling} upserts, 0 deletes, 0 skipped, 0 errors`);
      expect(run.code).toBe(0);
    } finally {
      await rm(corpus, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

function side(markdown: string, source: string): Side {
  return { markdown, headings: markdown.split('\n').filter((line) => /^#{1,6} /.test(line)), chunks: chunkMarkdown(markdown, source, CHUNKING) };
}

function headingPaths(chunks: Chunk[]): string[] {
  return chunks.map((chunk) => chunk.headingPath);
}

/** Total chunks of the corpus with DOCX/PPTX through docling-serve, and with the embedded converters. */
async function expectedChunkCounts(fixtures: Fixture[], docling: DoclingServeConverter): Promise<{ docling: number; embedded: number }> {
  const guideChunks = chunkMarkdown(guide(3), 'guide.md', CHUNKING).length;
  const counts = { docling: guideChunks, embedded: guideChunks };
  for (const fixture of fixtures) {
    const bytes = await fixture.bytes();
    const embedded = chunkMarkdown(await fixture.embedded.toMarkdown(bytes, fixture.name), fixture.name, CHUNKING).length;
    const viaDocling = fixture === HTML ? embedded : chunkMarkdown(await docling.toMarkdown(bytes, fixture.name), fixture.name, CHUNKING).length;
    counts.docling += viaDocling;
    counts.embedded += embedded;
  }
  return counts;
}
