import { afterEach, describe, expect, it, vi } from 'vitest';
import { DoclingServeConverter } from '../../src/converters/docling-serve.ts';
import { TeiEmbedder } from '../../src/embedders/tei.ts';
import { httpDispatcher } from '../../src/http/http-dispatcher.ts';
import { TeiReranker } from '../../src/rerankers/tei.ts';
import { converted, FakeDoclingServer } from '../ingest/fake-docling-server.ts';
import { teiEmbed, teiRerank } from '../../../../services/retrieval/test/fakes/fake-tei.ts';
import { closeFakeServers, startFakeServer } from './fake-server.ts';

afterEach(async () => {
  vi.restoreAllMocks();
  await closeFakeServers();
});

/** The origins the suite's own connection pool dispatched requests to, while `call` ran. */
async function dispatchedOrigins(call: () => Promise<unknown>): Promise<string[]> {
  const dispatch = vi.spyOn(httpDispatcher, 'dispatch');
  await call();
  return dispatch.mock.calls.map(([options]) => String((options as { origin?: unknown }).origin));
}

/**
 * Every remote call goes through http-dispatcher.ts's undici 7 pool, never the undici bundled in the running Node:
 * Node 26.6's stalls a kept-alive request on an idle event loop for as long again as it was idle (nodejs/undici#5600).
 */
describe("the suite's connection pool", () => {
  it('carries the TEI embedder\'s and reranker\'s calls', async () => {
    const tei = await startFakeServer((request, response) => (request.path === '/rerank' ? teiRerank(request, response) : teiEmbed(request, response)));
    expect(await dispatchedOrigins(() => new TeiEmbedder({ url: tei.url, model: 'm' }).embedDocuments(['a passage']))).toContain(tei.url);
    expect(await dispatchedOrigins(() => new TeiReranker({ url: tei.url }).rerank('query', ['a', 'b']))).toContain(tei.url);
  });

  it("carries docling-serve's conversions", async () => {
    const docling = await new FakeDoclingServer(() => converted('# Title\n\nText.')).start();
    try {
      expect(await dispatchedOrigins(() => new DoclingServeConverter({ url: docling.baseUrl }).toMarkdown(Buffer.from('PK'), 'a.docx'))).toContain(docling.baseUrl);
    } finally {
      await docling.close();
    }
  });
});
