import { errorCatalog, type ErrorCode } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, readJson, startTestStack, type TestStack } from './test-stack.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack.close();
});

const cases: Array<[string, unknown, ErrorCode]> = [
  ['a missing query', { k: 3 }, 'RAG_INVALID_QUERY'],
  ['an empty query', { query: '' }, 'RAG_INVALID_QUERY'],
  ['a blank query', { query: '   ' }, 'RAG_INVALID_QUERY'],
  ['a numeric query', { query: 42 }, 'RAG_INVALID_QUERY'],
  ['an array query', { query: ['a'] }, 'RAG_INVALID_QUERY'],
  ['a query over 2000 characters', { query: 'a'.repeat(2001) }, 'RAG_INVALID_QUERY'],
  ['k = 0', { query: 'backups', k: 0 }, 'RAG_INVALID_K'],
  ['k = 51', { query: 'backups', k: 51 }, 'RAG_INVALID_K'],
  ['a fractional k', { query: 'backups', k: 2.5 }, 'RAG_INVALID_K'],
  ['k as a string', { query: 'backups', k: '3' }, 'RAG_INVALID_K'],
  // Found by the property test: echoing k with JSON.stringify overflowed the stack and answered 500.
  ['k as arrays nested 20,000 deep', `{"query":"backups","k":${'['.repeat(20_000)}${']'.repeat(20_000)}}`, 'RAG_INVALID_K'],
  ['a JSON array body', [1, 2], 'RAG_INVALID_REQUEST'],
  ['a non-boolean stream flag', { query: 'backups', stream: 'yes' }, 'RAG_INVALID_REQUEST'],
  ['a body that is not JSON', '{"query": ', 'RAG_INVALID_JSON'],
  ['an empty JSON body', '', 'RAG_EMPTY_BODY'],
];

describe.each(['/search', '/chat'])('bad input on %s', (route) => {
  it.each(cases)('%s gets a 400 with a stable code', async (_name, body, code) => {
    const { status, body: answer } = await postJson(stack.baseUrl, route, body);
    expect(status).toBe(400);
    expect(status).toBe(errorCatalog[code].status);
    expect(answer.error.code).toBe(code);
    expect(typeof answer.error.message).toBe('string');
  });

  it('a body without content type gets RAG_EMPTY_BODY', async () => {
    const response = await fetch(`${stack.baseUrl}${route}`, { method: 'POST' });
    expect(response.status).toBe(400);
    expect((await readJson(response)).error.code).toBe('RAG_EMPTY_BODY');
  });

  it('a body of another media type gets 415', async () => {
    const response = await fetch(`${stack.baseUrl}${route}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(response.status).toBe(415);
    expect((await readJson(response)).error.code).toBe('RAG_UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('unknown routes and methods', () => {
  it.each([
    ['GET', '/nope'],
    ['POST', '/search/'],
    ['GET', '/chat/extra'],
  ])('%s %s gets 404 in the error shape', async (method, path) => {
    const response = await fetch(`${stack.baseUrl}${path}`, { method });
    expect(response.status).toBe(404);
    expect((await readJson(response)).error.code).toBe('RAG_NOT_FOUND');
  });

  it.each([
    ['GET', '/search', 'POST'],
    ['PUT', '/search', 'POST'],
    ['DELETE', '/chat', 'POST'],
    ['PATCH', '/chat?stream=true', 'POST'],
    ['OPTIONS', '/search', 'POST'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['DELETE', '/metrics', 'GET, HEAD'],
  ])('%s %s gets 405 with Allow: %s', async (method, path, allow) => {
    const response = await fetch(`${stack.baseUrl}${path}`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(await readJson(response)).toEqual({ error: { code: 'RAG_METHOD_NOT_ALLOWED', message: expect.stringContaining(`use ${allow}.`) } });
  });

  it('HEAD /search gets 405 with Allow and no body', async () => {
    const response = await fetch(`${stack.baseUrl}/search`, { method: 'HEAD' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.text()).toBe('');
  });
});

describe('a query at the length limit', () => {
  it('is accepted', async () => {
    const { status } = await postJson(stack.baseUrl, '/search', { query: 'backup '.repeat(285).slice(0, 2000) });
    expect(status).toBe(200);
  });
});
