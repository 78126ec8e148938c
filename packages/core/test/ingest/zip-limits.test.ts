/**
 * DOCX and PPTX are zips: a few kilobytes can inflate to gigabytes. The embedded converters refuse an
 * archive past its limits (RAG_DOCUMENT_TOO_COMPLEX) before inflating it, and stop inflating one whose
 * central directory lies about its sizes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ZIP_LIMITS } from '../../src/converters/zip-limits.ts';
import { DocxConverter, LocalDirectorySource, PptxConverter } from '../../src/ingestion.ts';
import { docxDocument, pptxDeck } from './fixture-documents.ts';
import { startHarness } from './ingest-harness.ts';

const SMALL_LIMITS = { maxEntries: 50, maxInflatedBytes: 1_000_000 };

/** A real document whose `part` is replaced by `inflatedBytes` of XML that deflate to almost nothing. */
async function bomb(document: Buffer, part: string, inflatedBytes: number): Promise<Buffer> {
  const zip = await JSZip.loadAsync(document);
  const filler = 'A'.repeat(inflatedBytes);
  zip.file(part, `<?xml version="1.0"?><!--${filler}-->`);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/**
 * Rewrites the uncompressed size the central directory gives `part` (APPNOTE 4.3.12: offset 24 of a
 * central file header, name at 46), as a crafted zip would, to slip past a check of declared sizes.
 */
function declareSize(archive: Buffer, part: string, size: number): Buffer {
  const patched = Buffer.from(archive);
  for (let offset = 0; offset < patched.length - 46; offset += 1) {
    if (patched.readUInt32LE(offset) !== 0x02014b50) continue;
    const nameLength = patched.readUInt16LE(offset + 28);
    if (patched.toString('utf8', offset + 46, offset + 46 + nameLength) !== part) continue;
    patched.writeUInt32LE(size, offset + 24);
    return patched;
  }
  throw new Error(`${part} is not in the archive`);
}

let docxBomb: Buffer;

beforeAll(async () => {
  // Just past the production limit: about 400 KB that inflate to 100 MB and one byte.
  docxBomb = await bomb(await docxDocument(), 'word/document.xml', DEFAULT_ZIP_LIMITS.maxInflatedBytes + 1);
});

describe('zip limits of the embedded DOCX and PPTX converters', () => {
  it('refuses a DOCX whose document.xml inflates past the limit from its declared size, inflating nothing', async () => {
    expect(docxBomb.length).toBeLessThan(1_000_000);

    await expect(new DocxConverter().toMarkdown(docxBomb)).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_TOO_COMPLEX',
      message: expect.stringMatching(/\(it declares 100,\d{3},\d{3} bytes once inflated, the limit is 100,000,000 bytes\)$/),
    });
  });

  it('stops inflating a DOCX whose central directory understates its size', async () => {
    const lying = declareSize(await bomb(await docxDocument(), 'word/document.xml', 5_000_000), 'word/document.xml', 100);

    await expect(new DocxConverter(SMALL_LIMITS).toMarkdown(lying)).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_TOO_COMPLEX',
      message: expect.stringContaining('(it inflates past 1,000,000 bytes, though it declares'),
    });
  });

  it('refuses a PPTX whose slide inflates past the limit, declared or not', async () => {
    const deckBomb = await bomb(await pptxDeck(), 'ppt/slides/slide1.xml', 5_000_000);
    const converter = new PptxConverter(SMALL_LIMITS);

    await expect(converter.toMarkdown(deckBomb)).rejects.toMatchObject({ code: 'RAG_DOCUMENT_TOO_COMPLEX', message: expect.stringContaining('declares') });
    await expect(converter.toMarkdown(declareSize(deckBomb, 'ppt/slides/slide1.xml', 100))).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_TOO_COMPLEX',
      message: expect.stringContaining('inflates past'),
    });
  });

  it('refuses an archive of too many files', async () => {
    const zip = await JSZip.loadAsync(await docxDocument());
    for (let index = 0; index < SMALL_LIMITS.maxEntries; index += 1) zip.file(`word/media/image${index}.png`, 'x');

    await expect(new DocxConverter(SMALL_LIMITS).toMarkdown(await zip.generateAsync({ type: 'nodebuffer' }))).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_TOO_COMPLEX',
      message: expect.stringMatching(/\(\d+ files in the archive, the limit is 50\)$/),
    });
  });

  it('reads the entry count from the end of central directory record, before parsing any entry', async () => {
    // Nothing but an end of central directory record announcing 60,000 files: unparseable as a zip.
    const record = Buffer.alloc(22);
    record.writeUInt32LE(0x06054b50, 0);
    record.writeUInt16LE(60_000, 8);
    record.writeUInt16LE(60_000, 10);

    await expect(new DocxConverter().toMarkdown(record)).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_TOO_COMPLEX',
      message: expect.stringContaining('(60,000 files in the archive, the limit is 10,000)'),
    });
  });

  it('still converts real documents within the default limits', async () => {
    await expect(new DocxConverter().toMarkdown(await docxDocument())).resolves.toMatch(/^# Release handbook$/m);
    await expect(new PptxConverter().toMarkdown(await pptxDeck())).resolves.toContain('## Quarterly roadmap');
  });
});

describe('a zip bomb in an ingest run', () => {
  let folder: string;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'rag-zip-bomb-'));
  });

  afterAll(() => rm(folder, { recursive: true, force: true }));

  it('counts as one error while the other documents are indexed', async () => {
    await writeFile(join(folder, 'bomb.docx'), docxBomb);
    await writeFile(join(folder, 'handbook.docx'), await docxDocument());
    await writeFile(join(folder, 'notes.md'), '# Notes\n\nRotate the keys every quarter.\n');
    const harness = await startHarness();
    try {
      const summary = await harness.run(new LocalDirectorySource(folder));

      expect(summary.failures.map((failure) => [failure.uri, failure.code])).toEqual([['bomb.docx', 'RAG_DOCUMENT_TOO_COMPLEX']]);
      expect([...(await harness.snapshot()).keys()]).toEqual(['handbook.docx', 'notes.md']);
    } finally {
      await harness.close();
    }
  });
});
