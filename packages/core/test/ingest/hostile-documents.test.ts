/**
 * One crafted file must cost its own failure and nothing more: every hostile document below used to
 * stall the run for minutes or overflow the stack, and the overflow, recorded as RAG_INTERNAL, then
 * blocked pruning at every later run. Each must now end as a document fault with its code, while the
 * other documents are indexed and a deleted document is still pruned.
 */
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ZIP_LIMITS } from '../../src/converters/zip-limits.ts';
import { ConverterRegistry, createConverters, LocalDirectorySource, type Converter } from '../../src/ingestion.ts';
import { docxDocument, pptxDeck } from './fixture-documents.ts';
import { guide } from './fixture-folder.ts';
import { startHarness, type Harness } from './ingest-harness.ts';

/** Deterministic junk (a linear congruential generator), so a failure reproduces. */
function junk(bytes: number, withNul: boolean): Buffer {
  const buffer = Buffer.alloc(bytes);
  let state = 12345;
  for (let index = 0; index < bytes; index += 1) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    buffer[index] = withNul ? state >> 23 : (state >> 23) % 255 + 1;
  }
  return buffer;
}

/** A real Office document whose `part` inflates past the production limit (see zip-limits.test.ts). */
async function zipBomb(document: Buffer, part: string): Promise<Buffer> {
  const zip = await JSZip.loadAsync(document);
  zip.file(part, `<?xml version="1.0"?><!--${'A'.repeat(DEFAULT_ZIP_LIMITS.maxInflatedBytes + 1)}-->`);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

const HOSTILE: Record<string, { content: () => Promise<Buffer | string>; code: string }> = {
  'emphasis-line.md': { content: async () => '*a'.repeat(200_000), code: 'RAG_DOCUMENT_TOO_COMPLEX' },
  'deep-quote.md': { content: async () => `${'>'.repeat(100_000)} quoted\n`, code: 'RAG_DOCUMENT_TOO_COMPLEX' },
  'deep-list.md': { content: async () => Array.from({ length: 1_000 }, (_, depth) => `${'  '.repeat(depth)}- level ${depth}`).join('\n'), code: 'RAG_DOCUMENT_TOO_COMPLEX' },
  'deep-divs.html': { content: async () => '<div>'.repeat(200_000), code: 'RAG_DOCUMENT_TOO_COMPLEX' },
  'huge-line.md': { content: async () => 'word '.repeat(60_000), code: 'RAG_DOCUMENT_TOO_COMPLEX' },
  'junk-with-nul.md': { content: async () => junk(200_000, true), code: 'RAG_DOCUMENT_UNREADABLE' },
  'junk.md': { content: async () => junk(200_000, false), code: 'RAG_DOCUMENT_UNREADABLE' },
  'junk.html': { content: async () => junk(50_000, false), code: 'RAG_DOCUMENT_UNREADABLE' },
  'bomb.docx': { content: async () => zipBomb(await docxDocument(), 'word/document.xml'), code: 'RAG_DOCUMENT_TOO_COMPLEX' },
  'bomb.pptx': { content: async () => zipBomb(await pptxDeck(), 'ppt/slides/slide1.xml'), code: 'RAG_DOCUMENT_TOO_COMPLEX' },
};

describe('hostile documents in an ingest run', () => {
  let folder: string;
  let harness: Harness;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'rag-hostile-'));
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('fails each as a document fault with its code, indexes the rest, keeps a spoiled document\'s points, and still prunes', { timeout: 60_000 }, async () => {
    for (const name of ['alpha.md', 'bravo.md', 'gone.md', 'spoiled.md']) await writeFile(join(folder, name), guide(2, name));
    expect((await harness.run(new LocalDirectorySource(folder))).errors).toBe(0);
    const before = await harness.snapshot();

    await unlink(join(folder, 'gone.md'));
    await writeFile(join(folder, 'spoiled.md'), `${'>'.repeat(50_000)} now hostile\n`);
    for (const [name, { content }] of Object.entries(HOSTILE)) await writeFile(join(folder, name), await content());
    // 40 kB of `*a` took 8 s to parse: now read as the text it is, in linear time.
    await writeFile(join(folder, 'emphasis.md'), `# Stars\n\n${'*a'.repeat(20_000)}\n`);
    const summary = await harness.run(new LocalDirectorySource(folder));

    const codes = Object.fromEntries(summary.failures.map((failure) => [failure.uri, failure.code]));
    expect(codes).toEqual({ ...Object.fromEntries(Object.entries(HOSTILE).map(([name, { code }]) => [name, code])), 'spoiled.md': 'RAG_DOCUMENT_TOO_COMPLEX' });
    const index = await harness.snapshot();
    expect([...index.keys()]).toEqual(['alpha.md', 'bravo.md', 'emphasis.md', 'spoiled.md']);
    expect(index.get('spoiled.md')).toEqual(before.get('spoiled.md'));
    // gone.md was pruned: the faults above do not stand in the way.
    expect(summary.deletes).toBe(before.get('gone.md')!.chunkIds.length);
  });
});

/** A converter that throws what a parser throws on a hostile document. */
class ThrowingConverter implements Converter {
  readonly extensions = ['md'] as const;

  constructor(private readonly error: Error) {}

  async toMarkdown(): Promise<string> {
    throw this.error;
  }
}

describe('an exception of a parser on one document', () => {
  for (const [error, code] of [
    [new RangeError('Maximum call stack size exceeded'), 'RAG_DOCUMENT_TOO_COMPLEX'],
    [new TypeError("Cannot read properties of undefined (reading 'children')"), 'RAG_DOCUMENT_UNREADABLE'],
  ] as const) {
    it(`is a document fault (${error.name} → ${code}) that does not block pruning`, async () => {
      const folder = await mkdtemp(join(tmpdir(), 'rag-parser-throws-'));
      const harness = await startHarness();
      try {
        for (const name of ['alpha.html', 'bravo.html', 'charlie.html', 'gone.html']) await writeFile(join(folder, name), `<h1>${name}</h1><p>Rotate the keys of ${name} every quarter.</p>`);
        await harness.run(new LocalDirectorySource(folder));
        await unlink(join(folder, 'gone.html'));
        await writeFile(join(folder, 'hostile.md'), '# any');
        const converters = new ConverterRegistry([...allOf(createConverters({ DOCLING_URL: undefined, DOCLING_API_KEY: undefined, DOCLING_TIMEOUT_MS: 1000 })), new ThrowingConverter(error)]);

        const summary = await harness.run(new LocalDirectorySource(folder), { converters });

        expect(summary.failures.map((failure) => [failure.uri, failure.code])).toEqual([['hostile.md', code]]);
        expect([...(await harness.snapshot()).keys()]).toEqual(['alpha.html', 'bravo.html', 'charlie.html']);
      } finally {
        await harness.close();
        await rm(folder, { recursive: true, force: true });
      }
    });
  }
});

/** The registry's converters, one per extension, for a test to add its own after them. */
function allOf(registry: ConverterRegistry): Converter[] {
  return registry.extensions.map((extension) => registry.forDocument(`x.${extension}`)!);
}

/** A conversion that holds the event loop while a stop (SIGTERM, a timer) is due, as a long parse does. */
class SlowConverter implements Converter {
  readonly extensions = ['md'] as const;

  constructor(private readonly stop: AbortController) {}

  async toMarkdown(): Promise<string> {
    setTimeout(() => this.stop.abort(new Error('stopped by SIGTERM')), 0);
    const until = Date.now() + 50;
    while (Date.now() < until) {
      // busy: the timer above cannot fire before the conversion returns
    }
    return '# Slow\n\nconverted';
  }
}

describe('a stop that arrives while a document converts', () => {
  // Mutations caught: the turn of the event loop between converting and chunking removed, or the
  // signal check after it: the document is then chunked (and in a dry run listed) after the stop.
  it('is seen before the document is chunked: the document is abandoned, not listed', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'rag-slow-convert-'));
    const harness = await startHarness();
    try {
      await writeFile(join(folder, 'slow.md'), '# any');
      const stop = new AbortController();
      const planned: string[] = [];

      const summary = await harness.run(new LocalDirectorySource(folder), { converters: new ConverterRegistry([new SlowConverter(stop)]), dryRun: true, signal: stop.signal, onPlanned: (uri) => planned.push(uri) });

      expect(summary.interrupted).toBe(true);
      expect(summary.abandoned).toBe(1);
      expect(planned).toEqual([]);
      expect(summary.failures).toEqual([]);
    } finally {
      await harness.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
