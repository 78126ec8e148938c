/**
 * A dependency that answers without end (a bug, a proxy gone wrong, a gzip bomb) must fail the call
 * as a bad response, the dependency's *_UNAVAILABLE, after a bounded read: never fill the memory.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiGatewayChatModel, TeiEmbedder } from '../../src/index.ts';
import { DoclingServeConverter } from '../../src/ingestion.ts';
import { callJson, MAX_BODY_BYTES, type RemoteCallOptions } from '../../src/http/remote-call.ts';
import { closeFakeServers, sendJson, startFakeServer, within } from './fake-server.ts';
import { failure } from './rag-failure.ts';

afterEach(closeFakeServers);

/** Writes `chunk` again and again, as fast as the client reads, until it goes away; says how much it sent. */
function pour(response: ServerResponse, chunk: string, status = 200, contentType = 'application/json') {
  const poured = { bytes: 0, stopped: false };
  const bytes = Buffer.from(chunk);
  response.writeHead(status, { 'content-type': contentType });
  void (async () => {
    while (!response.destroyed && poured.bytes < 1_000_000_000) {
      poured.bytes += bytes.length;
      if (!response.write(bytes)) await new Promise((resolve) => (response.once('drain', resolve), response.once('close', resolve)));
    }
    poured.stopped = response.destroyed;
  })();
  return poured;
}

function options(url: string, extra: Partial<RemoteCallOptions> = {}): RemoteCallOptions {
  return { dependency: 'embed', url, timeoutMs: 10_000, minBackoffMs: 5, ...extra };
}

describe('answers read up to a limit', () => {
  it('refuses an answer whose Content-Length is over the limit without reading it', async () => {
    const body = { data: 'x'.repeat(5_000) };
    const server = await startFakeServer((_, response) => sendJson(response, 200, body, { 'content-length': String(JSON.stringify(body).length) }));

    const error = await failure(callJson(options(`${server.url}/v1/embeddings`, { body: {}, maxBodyBytes: 1_000 })));

    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(error.message).toContain('answered with a body of 5,011 bytes over the limit of 1,000 bytes)');
    expect(server.requests, 'a bad response is not retried').toHaveLength(1);
  });

  it('stops reading an endless answer at the limit and closes the connection', async () => {
    let poured: ReturnType<typeof pour> | undefined;
    const server = await startFakeServer((_, response) => void (poured = pour(response, `[${'0.125,'.repeat(10_000)}`)));

    const error = await within(failure(callJson(options(`${server.url}/v1/embeddings`, { body: {}, maxBodyBytes: 1_000_000 }))));

    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(error.message).toContain('answered with a body over the limit of 1,000,000 bytes)');
    await within(server.requests[0]!.clientGone);
    expect(poured!.bytes).toBeLessThan(20_000_000);
  });

  it("applies each dependency's own limit: TEI embeddings stop at 64 MB", async () => {
    const server = await startFakeServer((_, response) => void pour(response, `{"data":[{"index":0,"embedding":[${'0.125,'.repeat(50_000)}`));
    const embedder = new TeiEmbedder({ url: server.url, model: 'm', retries: 0 });

    const error = await within(failure(embedder.embedDocuments(['a passage'])), 20_000);

    expect(MAX_BODY_BYTES.embed).toBe(64_000_000);
    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(error.message).toContain('over the limit of 64,000,000 bytes)');
  });

  it('ends a streamed completion that goes past the gateway limit with RAG_GATEWAY_UNAVAILABLE', async () => {
    const event = `data: ${JSON.stringify({ choices: [{ delta: { content: 'many words '.repeat(800) } }] })}\n\n`;
    const server = await startFakeServer((_, response) => void pour(response, event, 200, 'text/event-stream'));
    const gateway = new OpenAiGatewayChatModel({ url: server.url, retries: 0 });
    let tokens = 0;

    const error = await within(
      failure(
        (async () => {
          for await (const part of gateway.stream([{ role: 'user', content: 'go on' }])) if (part.type === 'token') tokens += 1;
        })(),
      ),
      20_000,
    );

    expect(error.code).toBe('RAG_GATEWAY_UNAVAILABLE');
    expect(error.message).toContain('over the limit of 16,000,000 bytes)');
    expect(tokens * event.length).toBeLessThanOrEqual(MAX_BODY_BYTES.gateway);
    expect(tokens * event.length).toBeGreaterThan(MAX_BODY_BYTES.gateway - 2 * event.length - 100_000);
  });

  it('refuses a docling-serve answer past its limit with RAG_CONVERTER_UNAVAILABLE', async () => {
    const server = await startFakeServer((_, response) => sendJson(response, 200, { status: 'success', document: { md_content: '# Big\n'.repeat(1_000_000) } }));
    const docling = new DoclingServeConverter({ url: server.url, retries: 0, maxBodyBytes: 1_000_000 });

    const error = await failure(docling.toMarkdown(Buffer.from('%PDF-1.7'), 'big.pdf'));

    expect(error.code).toBe('RAG_CONVERTER_UNAVAILABLE');
    expect(error.message).toContain('over the limit of 1,000,000 bytes)');
  });

  it('reads only the start of an endless error answer, enough to show its first line', async () => {
    let poured: ReturnType<typeof pour> | undefined;
    const server = await startFakeServer((_, response) => void (poured = pour(response, 'upstream exploded; '.repeat(1_000), 500, 'text/plain')));

    const error = await within(failure(callJson(options(`${server.url}/v1/embeddings`, { body: {} }))));

    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(error.message).toContain('answered HTTP 500: upstream exploded; upstream exploded;');
    await within(server.requests[0]!.clientGone);
    expect(poured!.bytes).toBeLessThan(20_000_000);
  });
});
