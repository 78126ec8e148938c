/**
 * Every error answers `{"error": {"code", "message"}}` with a code of the registry and its status,
 * including the ones Fastify and Node's HTTP parser raise before any route runs. Real HTTP, and raw
 * sockets for requests fetch() refuses to send.
 */
import { connect } from 'node:net';
import { errorCatalog, type ErrorCode } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from './test-stack.ts';

let stack: TestStack;
let port: number;

beforeAll(async () => {
  stack = await startTestStack();
  port = Number(new URL(stack.baseUrl).port);
});

afterAll(async () => {
  await stack.close();
});

/** Sends bytes as they are and reads what comes back until the server closes the connection. */
function rawRequest(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = received.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]), headers: head, body });
    });
  });
}

/** The body is exactly the error shape, and the status is the one the registry gives the code. */
function expectErrorShape(status: number, body: unknown, code: ErrorCode): void {
  expect(body).toEqual({ error: { code, message: expect.stringContaining(errorCatalog[code].message) } });
  expect(status).toBe(errorCatalog[code].status);
}

describe("Fastify's own errors in our shape", () => {
  it('a URL that cannot be decoded (GET /%) is 400 RAG_BAD_URL', async () => {
    const response = await fetch(`${stack.baseUrl}/%`);
    expect(response.headers.get('content-type')).toContain('application/json');
    expectErrorShape(response.status, await response.json(), 'RAG_BAD_URL');
  });

  it('the same on a route that exists (POST /search%zz)', async () => {
    const response = await fetch(`${stack.baseUrl}/search%zz`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"x"}' });
    expectErrorShape(response.status, await response.json(), 'RAG_BAD_URL');
  });

  it('another media type is 415 RAG_UNSUPPORTED_MEDIA_TYPE', async () => {
    const response = await fetch(`${stack.baseUrl}/search`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<query/>' });
    expectErrorShape(response.status, await response.json(), 'RAG_UNSUPPORTED_MEDIA_TYPE');
  });

  it('a body over 64 KiB is 413 RAG_PAYLOAD_TOO_LARGE', async () => {
    const response = await fetch(`${stack.baseUrl}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'x', padding: 'a'.repeat(64 * 1024) }),
    });
    expectErrorShape(response.status, await response.json(), 'RAG_PAYLOAD_TOO_LARGE');
  });

  it.each([
    ['truncated JSON', '{"query": "x"'],
    ['a prototype key', '{"query": "x", "__proto__": {"admin": true}}'],
    ['a constructor prototype key', '{"query": "x", "constructor": {"prototype": {"admin": true}}}'],
  ])('%s is 400 RAG_INVALID_JSON', async (_name, body) => {
    const response = await fetch(`${stack.baseUrl}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expectErrorShape(response.status, await response.json(), 'RAG_INVALID_JSON');
  });

  it('an unknown path is 404 RAG_NOT_FOUND', async () => {
    const response = await fetch(`${stack.baseUrl}/nowhere`);
    expectErrorShape(response.status, await response.json(), 'RAG_NOT_FOUND');
  });

  it('a wrong method is 405 RAG_METHOD_NOT_ALLOWED with Allow', async () => {
    const response = await fetch(`${stack.baseUrl}/chat`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.headers.get('allow')).toBe('POST');
    expectErrorShape(response.status, await response.json(), 'RAG_METHOD_NOT_ALLOWED');
  });
});

describe("Node's HTTP parser errors in our shape", () => {
  it('a request line that is not HTTP is 400 RAG_MALFORMED_REQUEST, then the connection closes', async () => {
    const { status, headers, body } = await rawRequest('HELLO THERE\r\n\r\n');
    expect(headers).toMatch(/^content-type: application\/json; charset=utf-8$/im);
    expect(headers).toMatch(/^connection: close$/im);
    expectErrorShape(status, JSON.parse(body), 'RAG_MALFORMED_REQUEST');
  });

  it('a Content-Length that is not a number is 400 RAG_MALFORMED_REQUEST', async () => {
    const { status, body } = await rawRequest('POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}');
    expectErrorShape(status, JSON.parse(body), 'RAG_MALFORMED_REQUEST');
  });

  it('headers over the limit are 431 RAG_HEADERS_TOO_LARGE', async () => {
    const { status, body } = await rawRequest(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectErrorShape(status, JSON.parse(body), 'RAG_HEADERS_TOO_LARGE');
  });

  it('the server keeps serving after them', async () => {
    expect((await fetch(`${stack.baseUrl}/healthz`)).status).toBe(200);
  });
});
