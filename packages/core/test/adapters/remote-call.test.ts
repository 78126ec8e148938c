import { afterEach, describe, expect, it } from 'vitest';
import { RagError } from '../../src/errors.ts';
import { callJson, callStream, parseRetryAfter, type RemoteCallOptions } from '../../src/http/remote-call.ts';
import { closedPortUrl, closeFakeServers, hang, sendJson, startFakeServer, within } from './fake-server.ts';
import { failure } from './rag-failure.ts';

afterEach(closeFakeServers);

const KEY = 'sk-secret-key-123456';

function options(url: string, extra: Partial<RemoteCallOptions> = {}): RemoteCallOptions {
  return { dependency: 'embed', url, timeoutMs: 2_000, minBackoffMs: 5, headers: { authorization: `Bearer ${KEY}` }, ...extra };
}


describe('callJson', () => {
  it('sends the method, headers and JSON body, and returns the parsed answer', async () => {
    const server = await startFakeServer((_, res) => sendJson(res, 200, { ok: true }));
    const answer = await callJson<{ ok: boolean }>(options(`${server.url}/v1/thing`, { body: { a: 1 } }));
    expect(answer).toEqual({ ok: true });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/thing');
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.body).toEqual({ a: 1 });
  });

  it('uses GET without a body', async () => {
    const server = await startFakeServer((_, res) => sendJson(res, 200, []));
    await callJson(options(`${server.url}/v1/models`));
    expect(server.requests[0]?.method).toBe('GET');
    expect(server.requests[0]?.body).toBeUndefined();
  });

  it('reports a refused connection as unavailable, naming the host and the reason, quickly', async () => {
    const url = await closedPortUrl();
    const error = await within(failure(callJson(options(`${url}/v1/embeddings`, { body: {} }))));
    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(error.message).toContain(new URL(url).host);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).not.toContain(KEY);
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it('reports a server that hangs past the deadline as a timeout, and drops the connection', async () => {
    const server = await startFakeServer(hang);
    const error = await within(failure(callJson(options(server.url, { dependency: 'gateway', timeoutMs: 200 }))));
    expect(error.code).toBe('RAG_GATEWAY_TIMEOUT');
    expect(error.message).toContain('200 ms');
    expect(server.requests).toHaveLength(1); // a timeout is never retried
    await within(server.requests[0]!.clientGone);
  });

  it('has no converter timeout code: a converter that hangs is unavailable', async () => {
    const server = await startFakeServer(hang);
    const error = await within(failure(callJson(options(server.url, { dependency: 'converter', timeoutMs: 200 }))));
    expect(error.code).toBe('RAG_CONVERTER_UNAVAILABLE');
    expect(error.message).toContain('did not answer within 200 ms');
  });

  it.each([
    [503, 3],
    [502, 3],
    [429, 3],
    [500, 1],
    [400, 1],
    [401, 1],
  ])('after HTTP %i, it has made %i attempt(s) and reports the dependency unavailable', async (status, attempts) => {
    const server = await startFakeServer((_, res) => sendJson(res, status, { error: 'unhealthy', error_type: 'unhealthy' }));
    const error = await within(failure(callJson(options(server.url, { dependency: 'rerank', body: {} }))));
    expect(error.code).toBe('RAG_RERANK_UNAVAILABLE');
    expect(error.message).toContain(`HTTP ${status}: unhealthy`);
    expect(server.requests).toHaveLength(attempts);
  });

  it('honours retries: 0', async () => {
    const server = await startFakeServer((_, res) => sendJson(res, 503, { error: 'unhealthy', error_type: 'unhealthy' }));
    await within(failure(callJson(options(server.url, { retries: 0 }))));
    expect(server.requests).toHaveLength(1);
  });

  it('succeeds when a 429 is followed by a 200, waiting as Retry-After asks', async () => {
    // Retry-After: 1 asks for 1000 ms; our own backoff here is 5-10 ms. A marker timer set for 600 ms
    // after the 429 is sent fires before the retry only if the retry waited as asked: an order of
    // events in one process, which a slow machine delays but cannot reverse.
    const events: string[] = [];
    const server = await startFakeServer((_, res) => {
      if (events.length > 0) {
        events.push('retry');
        return sendJson(res, 200, { ok: 1 });
      }
      events.push('429');
      setTimeout(() => events.push('600 ms later'), 600);
      return sendJson(res, 429, { error: 'Model is overloaded', error_type: 'overloaded' }, { 'retry-after': '1' });
    });
    await expect(callJson(options(server.url, { timeoutMs: 5_000 }))).resolves.toEqual({ ok: 1 });
    expect(events).toEqual(['429', '600 ms later', 'retry']);
    expect(server.requests).toHaveLength(2);
  });

  it('does not wait for a Retry-After past the deadline: the call times out instead', async () => {
    const server = await startFakeServer((_, res) => sendJson(res, 429, { error: 'Model is overloaded' }, { 'retry-after': '30' }));
    const error = await within(failure(callJson(options(server.url, { timeoutMs: 300 }))));
    expect(error.code).toBe('RAG_EMBED_TIMEOUT');
    expect(server.requests).toHaveLength(1);
  });

  it('treats a proxy 504 as a timeout, without retrying', async () => {
    const server = await startFakeServer((_, res) => {
      res.writeHead(504, { 'content-type': 'text/plain' });
      res.end('upstream request timeout');
    });
    const error = await within(failure(callJson(options(server.url, { dependency: 'gateway' }))));
    expect(error.code).toBe('RAG_GATEWAY_TIMEOUT');
    expect(error.message).toContain('HTTP 504: upstream request timeout');
    expect(server.requests).toHaveLength(1);
  });

  it('reports garbage JSON as unavailable, without retrying', async () => {
    const server = await startFakeServer((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data": [');
    });
    const error = await within(failure(callJson(options(server.url))));
    expect(error.code).toBe('RAG_EMBED_UNAVAILABLE');
    expect(error.message).toContain('invalid JSON');
    expect(server.requests).toHaveLength(1);
  });

  it('reports a caller abort as RAG_CLIENT_CLOSED, never retried, and closes the upstream request', async () => {
    const server = await startFakeServer(hang);
    const controller = new AbortController();
    const pending = failure(callJson(options(server.url, { signal: controller.signal })));
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await within(pending);
    expect(error.code).toBe('RAG_CLIENT_CLOSED');
    await within(server.requests[0]!.clientGone);
    expect(server.requests).toHaveLength(1);
  });

  it('never puts the API key into an error, even when the server echoes it', async () => {
    const server = await startFakeServer((req, res) => sendJson(res, 401, { error: `bad token ${String(req.headers.authorization)}` }));
    const error = await within(failure(callJson(options(server.url))));
    expect(error.message).not.toContain(KEY);
    expect(error.message).toContain('HTTP 401');
  });
});

describe('callStream', () => {
  it('returns the streaming body, and classifies a body that stalls past the deadline as a timeout', async () => {
    const server = await startFakeServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"a":1}\n\n'); // then nothing: the stream stalls
    });
    const response = await callStream(options(server.url, { dependency: 'gateway', timeoutMs: 300, body: {} }));
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: {"a":1}\n\n');
    const error = await within(reader.read().then(() => undefined, (e: unknown) => e));
    expect(error).toBeInstanceOf(RagError);
    expect((error as RagError).code).toBe('RAG_GATEWAY_TIMEOUT');
  });

  it('classifies an error status before the stream starts', async () => {
    const server = await startFakeServer((_, res) => sendJson(res, 400, { error: { message: 'bad model', type: 'invalid_request_error' } }));
    const error = await within(failure(callStream(options(server.url, { dependency: 'gateway', body: {} }))));
    expect(error.code).toBe('RAG_GATEWAY_UNAVAILABLE');
    expect(error.message).toContain('HTTP 400: bad model');
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2_000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    expect(parseRetryAfter(inTenSeconds)).toBeGreaterThan(5_000);
  });
});
