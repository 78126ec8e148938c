/**
 * TeiEmbedder against a server that answers as TEI's OpenAI-compatible route does:
 * https://huggingface.github.io/text-embeddings-inference/ (POST /v1/embeddings).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TeiEmbedder } from '../../src/embedders/tei.ts';
import { closedPortUrl, closeFakeServers, hang, sendJson, startFakeServer, within, type RecordedRequest } from './fake-server.ts';
import { failure } from './rag-failure.ts';
import type { ServerResponse } from 'node:http';

afterEach(closeFakeServers);

const KEY = 'tei-key-abcdefgh';

/** TEI's answer: data in any order (we reverse it), each vector [position, length of the text]. */
function answerEmbeddings(request: RecordedRequest, response: ServerResponse): void {
  const { input } = request.body as { input: string[] };
  const data = input.map((text, index) => ({ object: 'embedding', embedding: [index, text.length, 0.5], index })).reverse();
  sendJson(response, 200, { object: 'list', data, model: 'Qwen/Qwen3-Embedding-0.6B', usage: { prompt_tokens: 7, total_tokens: 7 } });
}

/** TEI's error shape on /v1/embeddings: OpenAICompatErrorResponse `{message, code, type}`. */
function teiError(response: ServerResponse, status: number, message: string, type: string): void {
  sendJson(response, status, { message, code: status, type });
}


describe('TeiEmbedder', () => {
  it('posts {input, model} to /v1/embeddings with the bearer key and returns vectors in input order', async () => {
    const server = await startFakeServer(answerEmbeddings);
    const embedder = new TeiEmbedder({ url: `${server.url}/`, apiKey: KEY, model: 'qwen3-embed' });
    const vectors = await embedder.embedDocuments(['a', 'bb', 'ccc']);
    expect(vectors).toEqual([
      [0, 1, 0.5],
      [1, 2, 0.5],
      [2, 3, 0.5],
    ]);
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/embeddings');
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.body).toEqual({ input: ['a', 'bb', 'ccc'], model: 'qwen3-embed' });
  });

  it('sends no authorization header without a key', async () => {
    const server = await startFakeServer(answerEmbeddings);
    await new TeiEmbedder({ url: server.url, model: 'm' }).embedQuery('q');
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('sends batches of at most batchSize texts and joins them in order', async () => {
    const server = await startFakeServer(answerEmbeddings);
    const embedder = new TeiEmbedder({ url: server.url, model: 'm', batchSize: 2 });
    const vectors = await embedder.embedDocuments(['a', 'bb', 'ccc', 'dddd', 'eeeee']);
    expect(server.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([['a', 'bb'], ['ccc', 'dddd'], ['eeeee']]);
    expect(vectors.map((v) => v[1])).toEqual([1, 2, 3, 4, 5]);
  });

  it('defaults to batches of 32, TEI default --max-client-batch-size', async () => {
    const server = await startFakeServer(answerEmbeddings);
    await new TeiEmbedder({ url: server.url, model: 'm' }).embedDocuments(Array.from({ length: 33 }, (_, i) => `t${i}`));
    expect(server.requests.map((r) => (r.body as { input: string[] }).input.length)).toEqual([32, 1]);
  });

  it('applies the passage prefix to documents and the query prefix to queries', async () => {
    const server = await startFakeServer(answerEmbeddings);
    const embedder = new TeiEmbedder({ url: server.url, model: 'e5', queryPrefix: 'query: ', passagePrefix: 'passage: ' });
    await embedder.embedDocuments(['doc']);
    const query = await embedder.embedQuery('question');
    expect(server.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([['passage: doc'], ['query: question']]);
    expect(query).toEqual([0, 'query: question'.length, 0.5]);
  });

  it('makes no request for no texts', async () => {
    const server = await startFakeServer(answerEmbeddings);
    expect(await new TeiEmbedder({ url: server.url, model: 'm' }).embedDocuments([])).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('learns the dimension once and caches it', async () => {
    const server = await startFakeServer(answerEmbeddings);
    const embedder = new TeiEmbedder({ url: server.url, model: 'qwen3-embed' });
    expect(await embedder.describe()).toEqual({ model: 'qwen3-embed', dimension: 3 });
    expect(await embedder.describe()).toEqual({ model: 'qwen3-embed', dimension: 3 });
    expect(server.requests).toHaveLength(1);
  });

  it('locks to the model id TEI reports on GET /info when no model is configured', async () => {
    const server = await startFakeServer((request, response) =>
      request.path === '/info'
        ? sendJson(response, 200, { model_id: 'onnx-community/Qwen3-Embedding-0.6B-ONNX', model_type: { embedding: { pooling: 'last_token' } }, max_client_batch_size: 32 })
        : answerEmbeddings(request, response),
    );
    const embedder = new TeiEmbedder({ url: server.url, apiKey: KEY });
    expect(await embedder.describe()).toEqual({ model: 'onnx-community/Qwen3-Embedding-0.6B-ONNX', dimension: 3 });
    expect(server.requests.map((request) => [request.method, request.path])).toEqual([
      ['GET', '/info'],
      ['POST', '/v1/embeddings'],
    ]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.requests[1]?.body).toEqual({ input: ['dimension probe'], model: 'onnx-community/Qwen3-Embedding-0.6B-ONNX' });
  });

  it('locks to the one model a server without /info lists on GET /v1/models (llama-server)', async () => {
    // llama.cpp tools/server/server.cpp: no /info route (404); GET /v1/models lists the --alias as data[0].id.
    const server = await startFakeServer((request, response) => {
      if (request.path === '/info') return sendJson(response, 404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
      if (request.path === '/v1/models') return sendJson(response, 200, { object: 'list', data: [{ id: 'nomic-embed-text-v1.5', object: 'model', owned_by: 'llamacpp' }] });
      return answerEmbeddings(request, response);
    });
    const embedder = new TeiEmbedder({ url: server.url });
    expect(await embedder.describe()).toEqual({ model: 'nomic-embed-text-v1.5', dimension: 3 });
    expect(server.requests.map((request) => [request.method, request.path])).toEqual([
      ['GET', '/info'],
      ['GET', '/v1/models'],
      ['POST', '/v1/embeddings'],
    ]);
    expect(server.requests[2]?.body).toEqual({ input: ['dimension probe'], model: 'nomic-embed-text-v1.5' });
  });

  it('asks for EMBED_MODEL when a server without /info lists several models', async () => {
    const server = await startFakeServer((request, response) =>
      request.path === '/info' ? sendJson(response, 404, {}) : sendJson(response, 200, { data: [{ id: 'a' }, { id: 'b' }] }),
    );
    await expect(new TeiEmbedder({ url: server.url }).describe()).rejects.toMatchObject({ code: 'RAG_EMBED_UNAVAILABLE', message: expect.stringContaining('set EMBED_MODEL') });
  });

  it('does not cache a failed dimension probe', async () => {
    let calls = 0;
    const server = await startFakeServer((req, res) =>
      calls++ === 0 ? teiError(res, 424, 'Inference failed', 'backend') : answerEmbeddings(req, res),
    );
    const embedder = new TeiEmbedder({ url: server.url, model: 'm' });
    await failure(embedder.describe());
    expect((await embedder.describe()).dimension).toBe(3);
  });

  it.each([
    [413, { message: 'batch size 64 > maximum allowed batch size 32', code: 413, type: 'validation' }],
    [422, { error: 'batch size 64 > maximum allowed batch size 32', error_type: 'validation' }],
  ])('turns a %i batch-size refusal into RAG_EMBED_BATCH_TOO_LARGE naming both settings', async (status, body) => {
    const server = await startFakeServer((_, res) => sendJson(res, status, body));
    const embedder = new TeiEmbedder({ url: server.url, model: 'm', batchSize: 64, apiKey: KEY });
    const error = await within(failure(embedder.embedDocuments(Array.from({ length: 64 }, () => 'x'))));
    expect(error.code).toBe('RAG_EMBED_BATCH_TOO_LARGE');
    expect(error.message).toContain('EMBED_BATCH_SIZE');
    expect(error.message).toContain('--max-client-batch-size');
    expect(error.message).toContain('batch size 64 > maximum allowed batch size 32');
    expect(error.message).not.toContain(KEY);
    expect(server.requests).toHaveLength(1);
  });

  it('reports other validation and tokenizer errors as unavailable, without retrying', async () => {
    const server = await startFakeServer((_, res) => teiError(res, 422, 'Tokenization error', 'tokenizer'));
    const error = await within(failure(new TeiEmbedder({ url: server.url, model: 'm' }).embedQuery('q')));
    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(error.message).toContain('HTTP 422: Tokenization error');
    expect(server.requests).toHaveLength(1);
  });

  it('reports a 424 backend error without retrying', async () => {
    const server = await startFakeServer((_, res) => teiError(res, 424, 'Inference failed', 'backend'));
    const error = await within(failure(new TeiEmbedder({ url: server.url, model: 'm' }).embedQuery('q')));
    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 503 unhealthy server twice, then reports it unavailable', async () => {
    const server = await startFakeServer((_, res) => teiError(res, 503, 'unhealthy', 'unhealthy'));
    const error = await within(failure(new TeiEmbedder({ url: server.url, model: 'm', minBackoffMs: 5 }).embedQuery('q')));
    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(error.message).toContain('HTTP 503: unhealthy');
    expect(server.requests).toHaveLength(3);
  });

  it('rides out a 429 overloaded answer', async () => {
    let calls = 0;
    const server = await startFakeServer((req, res) =>
      calls++ === 0 ? teiError(res, 429, 'Model is overloaded', 'overloaded') : answerEmbeddings(req, res),
    );
    const vector = await new TeiEmbedder({ url: server.url, model: 'm', minBackoffMs: 5 }).embedQuery('q');
    expect(vector).toEqual([0, 1, 0.5]);
    expect(server.requests).toHaveLength(2);
  });

  it('refuses an answer with the wrong number of embeddings', async () => {
    const server = await startFakeServer((_, res) => sendJson(res, 200, { object: 'list', data: [{ object: 'embedding', embedding: [1], index: 0 }] }));
    const error = await within(failure(new TeiEmbedder({ url: server.url, model: 'm' }).embedDocuments(['a', 'b'])));
    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(error.message).toContain('1 embeddings for 2 inputs');
  });

  it('reports a refused connection and a hang with their own codes', async () => {
    const refused = new TeiEmbedder({ url: await closedPortUrl(), model: 'm', minBackoffMs: 5 });
    expect((await within(failure(refused.embedQuery('q')))).code).toBe('RAG_EMBED_UNAVAILABLE');
    const server = await startFakeServer(hang);
    const slow = new TeiEmbedder({ url: server.url, model: 'm', timeoutMs: 200 });
    expect((await within(failure(slow.embedQuery('q')))).code).toBe('RAG_EMBED_TIMEOUT');
  });
});

describe('TeiEmbedder.checkReady', () => {
  it("probes TEI's GET /health once with the bearer key; an empty 200 is ready", async () => {
    const server = await startFakeServer((_request, response) => void response.writeHead(200).end());
    await new TeiEmbedder({ url: server.url, apiKey: KEY, model: 'm' }).checkReady();
    expect(server.requests.map((r) => [r.method, r.path, r.headers.authorization])).toEqual([['GET', '/health', `Bearer ${KEY}`]]);
  });

  it('reports 503 unhealthy as RAG_EMBED_UNAVAILABLE without retrying', async () => {
    const server = await startFakeServer((_request, response) => sendJson(response, 503, { error: 'Model is loading', error_type: 'unhealthy' }));
    const error = await failure(new TeiEmbedder({ url: server.url, model: 'm', minBackoffMs: 1 }).checkReady());
    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(server.requests).toHaveLength(1);
  });
});
