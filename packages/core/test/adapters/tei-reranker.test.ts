/**
 * TeiReranker against a server that answers as TEI's /rerank does:
 * https://huggingface.github.io/text-embeddings-inference/ (POST /rerank → [{index, score}] best first,
 * errors `{error, error_type}`).
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { TeiReranker } from '../../src/rerankers/tei.ts';
import { closeFakeServers, hang, sendJson, startFakeServer, within, type RecordedRequest } from './fake-server.ts';
import { failure } from './rag-failure.ts';

afterEach(closeFakeServers);

const KEY = 'rerank-key-abcdefgh';

/** Scores each text by the number in it ("doc 7" → 0.07), sorted best first as TEI does. */
function answerScores(request: RecordedRequest, response: ServerResponse): void {
  const { texts } = request.body as { texts: string[] };
  const ranks = texts.map((text, index) => ({ index, score: Number(text.split(' ')[1]) / 100 }));
  sendJson(response, 200, ranks.sort((a, b) => b.score - a.score));
}


describe('TeiReranker', () => {
  it('posts {query, texts, truncate: true} to /rerank with the bearer key', async () => {
    const server = await startFakeServer(answerScores);
    const reranker = new TeiReranker({ url: server.url, apiKey: KEY, model: 'bge-reranker-base' });
    const scores = await reranker.rerank('what?', ['doc 1', 'doc 9', 'doc 5']);
    expect(scores).toEqual([
      { index: 1, score: 0.09 },
      { index: 2, score: 0.05 },
      { index: 0, score: 0.01 },
    ]);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/rerank');
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.body).toEqual({ query: 'what?', texts: ['doc 1', 'doc 9', 'doc 5'], truncate: true });
    expect(reranker.modelId).toBe('bge-reranker-base');
  });

  it('splits 50 candidates into batches of 32 and merges them best first with their original positions', async () => {
    const server = await startFakeServer(answerScores);
    const texts = Array.from({ length: 50 }, (_, i) => `doc ${(i * 37) % 50}`);
    const scores = await new TeiReranker({ url: server.url }).rerank('q', texts);
    expect(server.requests.map((r) => (r.body as { texts: string[] }).texts.length)).toEqual([32, 18]);
    expect(scores).toHaveLength(50);
    expect(scores.map((s) => s.score)).toEqual([...scores.map((s) => s.score)].sort((a, b) => b - a));
    for (const { index, score } of scores) expect(Number(texts[index]!.split(' ')[1]) / 100).toBe(score);
  });

  it('makes no request for no candidates', async () => {
    const server = await startFakeServer(answerScores);
    expect(await new TeiReranker({ url: server.url }).rerank('q', [])).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('reports a 413 batch refusal as unavailable, naming the server message', async () => {
    const server = await startFakeServer((_, res) =>
      sendJson(res, 413, { error: 'batch size 3 > maximum allowed batch size 2', error_type: 'validation' }),
    );
    const error = await within(failure(new TeiReranker({ url: server.url, batchSize: 3 }).rerank('q', ['doc 1', 'doc 2', 'doc 3'])));
    expect(error.code).toBe('RAG_RERANK_UNAVAILABLE');
    expect(error.message).toContain('batch size 3 > maximum allowed batch size 2');
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 503, then succeeds', async () => {
    let calls = 0;
    const server = await startFakeServer((req, res) =>
      calls++ === 0 ? sendJson(res, 503, { error: 'unhealthy', error_type: 'unhealthy' }) : answerScores(req, res),
    );
    const scores = await new TeiReranker({ url: server.url, minBackoffMs: 5 }).rerank('q', ['doc 3']);
    expect(scores).toEqual([{ index: 0, score: 0.03 }]);
    expect(server.requests).toHaveLength(2);
  });

  it('reports a hang past the timeout as RAG_RERANK_TIMEOUT', async () => {
    const server = await startFakeServer(hang);
    const error = await within(failure(new TeiReranker({ url: server.url, timeoutMs: 200 }).rerank('q', ['doc 1'])));
    expect(error.code).toBe('RAG_RERANK_TIMEOUT');
  });

  it('refuses an answer that is not one score per text', async () => {
    const server = await startFakeServer((_, res) => sendJson(res, 200, [{ index: 5, score: 1 }]));
    const error = await within(failure(new TeiReranker({ url: server.url }).rerank('q', ['doc 1'])));
    expect(error.code).toBe('RAG_RERANK_UNAVAILABLE');
  });

  it('refuses a negative index instead of silently dropping that candidate', async () => {
    const server = await startFakeServer((_, res) => sendJson(res, 200, [{ index: -1, score: 1 }]));
    const error = await within(failure(new TeiReranker({ url: server.url }).rerank('q', ['doc 1'])));
    expect(error.code).toBe('RAG_RERANK_UNAVAILABLE');
  });
});

describe('TeiReranker.checkReady', () => {
  it("probes TEI's GET /health once with the bearer key; an empty 200 is ready", async () => {
    const server = await startFakeServer((_request, response) => void response.writeHead(200).end());
    await new TeiReranker({ url: server.url, apiKey: KEY }).checkReady();
    expect(server.requests.map((r) => [r.method, r.path, r.headers.authorization])).toEqual([['GET', '/health', `Bearer ${KEY}`]]);
  });

  it('reports a hang past the probe timeout as RAG_RERANK_TIMEOUT', async () => {
    const server = await startFakeServer(hang);
    const error = await failure(within(new TeiReranker({ url: server.url, timeoutMs: 200 }).checkReady()));
    expect(error.code).toBe('RAG_RERANK_TIMEOUT');
  });
});
