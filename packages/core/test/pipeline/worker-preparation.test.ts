import { afterEach, describe, expect, it } from 'vitest';
import type { Converter } from '../../src/converters/converter.ts';
import { createEmbeddedConverters } from '../../src/converters/converters-from-config.ts';
import { InProcessPreparation, type PreparationRequest } from '../../src/pipeline/document-preparation.ts';
import { WorkerPreparation } from '../../src/pipeline/worker-preparation.ts';
import { corruptPdf, docxDocument, pdfWithText, pptxDeck } from '../ingest/fixture-documents.ts';
import { inflatingPdf } from '../ingest/inflating-pdf.ts';
import { guide, HTML_PAGE } from '../ingest/fixture-folder.ts';

const chunking = { chunkSize: 1200, chunkOverlap: 200 };
const converters = createEmbeddedConverters();
const pools: WorkerPreparation[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function workerPreparation(options: Partial<ConstructorParameters<typeof WorkerPreparation>[0]> = {}): WorkerPreparation {
  const pool = new WorkerPreparation({ workers: 2, timeoutMs: 60_000, converters: {}, ...options });
  pools.push(pool);
  return pool;
}

const misbehaving = new URL('./workers/misbehaving-worker.mjs', import.meta.url);
const request = (uri: string, bytes: Buffer, converter: Converter = converters.forDocument(uri)!): PreparationRequest => ({ converter, bytes, uri, chunking });

describe('documents converted and chunked in worker threads', () => {
  it('give the chunks the job would make on its own thread, for every embedded format', async () => {
    const documents: [string, Buffer][] = [
      ['guide.md', Buffer.from(guide(8))],
      ['status.html', Buffer.from(HTML_PAGE)],
      ['report.pdf', await pdfWithText(['First page about uptime.', 'Second page about budgets.'])],
      ['handbook.docx', await docxDocument()],
      ['roadmap.pptx', await pptxDeck()],
    ];
    const workers = workerPreparation();
    const here = new InProcessPreparation();
    for (const [uri, bytes] of documents) {
      const [inWorker, onThisThread] = await Promise.all([workers.prepare(request(uri, bytes)), here.prepare(request(uri, bytes))]);
      expect(inWorker.chunks.length).toBeGreaterThan(0);
      expect(inWorker).toEqual(onThisThread);
    }
  });

  it('chunk in the worker what another converter (docling-serve) converted on this thread', async () => {
    const remote: Converter = { extensions: ['pdf'], toMarkdown: async () => '# Remote\n\nConverted elsewhere.' };
    const prepared = await workerPreparation().prepare(request('scan.pdf', Buffer.from('%PDF'), remote));
    expect(prepared.chunks.map((chunk) => chunk.text)).toEqual(['scan.pdf > Remote\n\nConverted elsewhere.']);
  });

  it('refuse an HTML page past the size cap they are given (INGEST_MAX_HTML_BYTES) before parsing it', async () => {
    const bytes = Buffer.from(HTML_PAGE);
    await expect(workerPreparation({ workers: 1, converters: { maxHtmlBytes: bytes.length - 1 } }).prepare(request('status.html', bytes))).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_TOO_COMPLEX',
      message: /past INGEST_MAX_HTML_BYTES/,
    });
    const atTheCap = await workerPreparation({ workers: 1, converters: { maxHtmlBytes: bytes.length } }).prepare(request('status.html', bytes));
    expect(atTheCap.chunks.length).toBeGreaterThan(0);
  });

  it("bring a document's own failure back with its code and reason, as on this thread", async () => {
    const bytes = corruptPdf();
    const onThisThread = await new InProcessPreparation().prepare(request('broken.pdf', bytes)).catch((error: unknown) => error);
    await expect(workerPreparation().prepare(request('broken.pdf', bytes))).rejects.toMatchObject({
      name: 'RagError',
      code: 'RAG_DOCUMENT_UNREADABLE',
      message: (onThisThread as Error).message,
    });
  });
});

describe('one expensive document', () => {
  it('past the time budget fails alone with RAG_CONVERSION_TIMEOUT, and the next documents go through', async () => {
    const pool = workerPreparation({ workers: 1, timeoutMs: 1_500, workerScript: misbehaving });
    const stalled = pool.prepare(request('slow.html', Buffer.from('<p>x</p>')));
    const next = pool.prepare(request('fine.html', Buffer.from('<p>y</p>')));
    await expect(stalled).rejects.toMatchObject({ code: 'RAG_CONVERSION_TIMEOUT', message: /slow\.html: stopped after 1\.5 s/ });
    await expect(next).resolves.toMatchObject({ markdown: 'fine.html' });
  });

  it('leaves this thread free meanwhile (its timers run), and stops at once when the run is stopped', async () => {
    const pool = workerPreparation({ workers: 1, workerScript: misbehaving });
    const stop = new AbortController();
    let ticks = 0;
    const heartbeat = setInterval(() => {
      ticks += 1;
      if (ticks === 5) stop.abort(new Error('SIGTERM'));
    }, 20);
    try {
      await expect(pool.prepare({ ...request('slow.html', Buffer.from('<p>x</p>')), signal: stop.signal })).rejects.toThrow('SIGTERM');
    } finally {
      clearInterval(heartbeat);
    }
    expect(ticks).toBeGreaterThanOrEqual(5);
    await expect(pool.prepare(request('fine.html', Buffer.from('<p>y</p>')))).resolves.toMatchObject({ markdown: 'fine.html' });
  });

  it('runs each worker under the configured heap limit (INGEST_CONVERT_MEMORY_MB), 1024 MiB unless set', async () => {
    const limitsOf = async (pool: WorkerPreparation): Promise<{ maxOldGenerationSizeMb?: number }> =>
      JSON.parse((await pool.prepare(request('limits.html', Buffer.from('<p>x</p>')))).markdown) as { maxOldGenerationSizeMb?: number };
    expect(await limitsOf(workerPreparation({ workers: 1, heapMb: 64, workerScript: misbehaving }))).toMatchObject({ maxOldGenerationSizeMb: 64 });
    expect(await limitsOf(workerPreparation({ workers: 1, heapMb: 96, workerScript: misbehaving }))).toMatchObject({ maxOldGenerationSizeMb: 96 });
    expect(await limitsOf(workerPreparation({ workers: 1, workerScript: misbehaving }))).toMatchObject({ maxOldGenerationSizeMb: 1024 });
  });

  it('past the worker heap limit fails alone with RAG_DOCUMENT_TOO_COMPLEX, and a document under it goes through', async () => {
    // 64 MiB: a document holding 128 MiB is past it, one holding 16 MiB is not. Without the limit (V8's default,
    // some GiB) both would go through.
    const pool = workerPreparation({ workers: 1, heapMb: 64, workerScript: misbehaving });
    await expect(pool.prepare(request('holds-16.html', Buffer.from('<p>x</p>')))).resolves.toMatchObject({ markdown: 'holds-16.html 16' });
    await expect(pool.prepare(request('holds-128.html', Buffer.from('<p>x</p>')))).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_TOO_COMPLEX',
      message: /more than 64 MiB/,
    });
    await expect(pool.prepare(request('huge.html', Buffer.from('<p>x</p>')))).rejects.toMatchObject({ code: 'RAG_DOCUMENT_TOO_COMPLEX' });
    await expect(pool.prepare(request('fine.html', Buffer.from('<p>y</p>')))).resolves.toMatchObject({ markdown: 'fine.html' });
  });

  it('past its buffer budget (INGEST_CONVERT_BUFFERS_MB) fails alone with RAG_DOCUMENT_TOO_COMPLEX, and a document under it goes through', async () => {
    // ArrayBuffers are outside V8's heap: under a 64 MiB heap limit alone, a document holding 256 MiB of them goes through.
    const heapOnly = workerPreparation({ workers: 1, heapMb: 64, buffersMb: 1024, workerScript: misbehaving });
    await expect(heapOnly.prepare(request('buffers-256.html', Buffer.from('<p>x</p>')))).resolves.toMatchObject({ markdown: 'buffers-256.html 256' });
    const pool = workerPreparation({ workers: 1, heapMb: 64, buffersMb: 32, workerScript: misbehaving });
    await expect(pool.prepare(request('buffers-8.html', Buffer.from('<p>x</p>')))).resolves.toMatchObject({ markdown: 'buffers-8.html 8' });
    await expect(pool.prepare(request('buffers-256.html', Buffer.from('<p>x</p>')))).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_TOO_COMPLEX',
      message: /held \d+ MiB outside the heap.*INGEST_CONVERT_BUFFERS_MB: 32 MiB/,
    });
    await expect(pool.prepare(request('fine.html', Buffer.from('<p>y</p>')))).resolves.toMatchObject({ markdown: 'fine.html' });
  });

  it('a PDF whose stream inflates past the buffer budget fails alone with RAG_DOCUMENT_TOO_COMPLEX, though its heap stays under the limit', async () => {
    // The audit's PDF, scaled down: a few hundred KB whose page content inflates to 192 MiB in pdf.js's buffers.
    const pool = workerPreparation({ workers: 1, buffersMb: 64 });
    await expect(pool.prepare(request('inflating.pdf', await inflatingPdf(192)))).rejects.toMatchObject({
      code: 'RAG_DOCUMENT_TOO_COMPLEX',
      message: /outside the heap.*INGEST_CONVERT_BUFFERS_MB: 64 MiB/,
    });
    const fine = await pool.prepare(request('report.pdf', await pdfWithText(['A page about uptime.'])));
    expect(fine.chunks.length).toBeGreaterThan(0);
  });
});
