/**
 * A client that sends a request's headers and never its body does not hold its connection: past the
 * request deadline (Fastify's requestTimeout, Node's server.requestTimeout,
 * https://nodejs.org/api/http.html#serverrequesttimeout) it gets 408 RAG_REQUEST_TIMEOUT and the
 * connection is closed, with a valid key as without one.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '../../../packages/core/test/adapters/fake-server.ts';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { startTestStack, type TestStack } from './test-stack.ts';

const KEY = 'sk-slow-client-2c81';
/** Far below the production 30 s so the test is short; the bound below is only against a hang. */
const REQUEST_MS = 500;

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({
    apiKeys: parseApiKeys(`keys:\n  - {name: slow, sha256: ${hashApiKey(KEY)}, groups: []}\n`, 'keys.yaml'),
    httpTimeouts: { requestMs: REQUEST_MS, checkIntervalMs: 100 },
  });
});

afterAll(async () => {
  await stack?.close();
});

/** Writes `head` on a raw connection, never the body it announces, and returns all the server sends until it closes. */
function sendHeadersOnly(head: string): Promise<string> {
  const { hostname, port } = new URL(stack.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

describe('a request whose body never comes', () => {
  it('is answered 408 RAG_REQUEST_TIMEOUT and its connection closed', async () => {
    const head = `POST /search HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"query": "sna`;
    const answer = await within(sendHeadersOnly(head), 15_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"code":"RAG_REQUEST_TIMEOUT"');
  });

  it('is cut the same way when the headers themselves never end', async () => {
    const answer = await within(sendHeadersOnly('POST /search HTTP/1.1\r\nHost: localhost\r\nContent-Type: appl'), 15_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"code":"RAG_REQUEST_TIMEOUT"');
  });
});

describe('an idle connection', () => {
  /** Far below the production 10 minutes (HTTP_TIMEOUTS.idleMs, keepAliveMs); the request deadline is out of the way. */
  const IDLE_MS = 300;
  let idle: TestStack;

  beforeAll(async () => {
    idle = await startTestStack({ httpTimeouts: { requestMs: 60_000, idleMs: IDLE_MS, keepAliveMs: IDLE_MS, checkIntervalMs: 100 } });
  });

  afterAll(async () => {
    await idle?.close();
  });

  /** Opens a raw connection, optionally sends one request on it, then nothing; resolves with what came back once the server closes it. */
  function openAndWait(request?: string): Promise<string> {
    const { hostname, port } = new URL(idle.baseUrl);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => request && socket.write(request));
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (received += chunk));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
    });
  }

  // Node's server.timeout (Fastify's connectionTimeout): https://nodejs.org/api/http.html#servertimeout
  it('is closed by the server when it never sends a byte', async () => {
    expect(await within(openAndWait(), 15_000)).toBe('');
  });

  // Node's server.keepAliveTimeout (Fastify's keepAliveTimeout): https://nodejs.org/api/http.html#serverkeepalivetimeout
  it('is closed after a kept-alive request, once it stays silent', async () => {
    const answer = await within(openAndWait('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n'), 15_000);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('behind a Google load balancer', () => {
  it('keeps connections open longer than the balancer does (600 s), so it never closes one the balancer is about to use', async () => {
    // https://cloud.google.com/load-balancing/docs/https/request-distribution ("HTTP keepalive"): the backend keepalive is fixed at 600 s.
    const stack = await startTestStack({});
    try {
      expect(stack.app.server.keepAliveTimeout).toBeGreaterThan(600_000);
    } finally {
      await stack.close();
    }
  });
});
