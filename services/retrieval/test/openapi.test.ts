/**
 * /openapi.json against the real app: every route it serves is documented, and real responses of each
 * route validate (ajv) against the document's schema for their status and media type.
 */
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, startTestStack, type TestStack } from './test-stack.ts';

let stack: TestStack;
let document: any;
const ajv = new Ajv({ strict: false, allErrors: true });

beforeAll(async () => {
  stack = await startTestStack();
  document = await readJson(await fetch(`${stack.baseUrl}/openapi.json`));
});

afterAll(async () => {
  await stack?.close();
});

/** Fetches, then checks status, media type and (for JSON) the body against the documented schema. */
async function expectDocumented(method: string, path: string, init: RequestInit = {}) {
  const response = await fetch(`${stack.baseUrl}${path}`, { method, ...init });
  const operation = document.paths[path]?.[method.toLowerCase()];
  expect(operation, `${method} ${path} is documented`).toBeDefined();
  const documented = operation.responses[String(response.status)];
  expect(documented, `${method} ${path} → ${response.status} is documented`).toBeDefined();
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!;
  if (response.status === 202) return response;
  expect(Object.keys(documented.content ?? {}), `${method} ${path} → ${mediaType}`).toContain(mediaType);
  if (mediaType === 'application/json') {
    const validate = ajv.compile(documented.content[mediaType].schema);
    const body = await readJson(response);
    expect(validate(body), `${method} ${path} ${response.status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  }
  return response;
}

const jsonPost = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1 and documents every route the app serves', async () => {
    expect(document.openapi).toBe('3.1.0');
    for (const [path, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      for (const method of Object.keys(operations)) expect(stack.app.hasRoute({ method: method.toUpperCase() as 'GET', url: path.replace(/\{(\w+)\}/g, ':$1') }), `${method} ${path}`).toBe(true);
    }
    const served = stack.app.printRoutes({ commonPrefix: false });
    // Fastify prints the routes as a tree under `/` (commonPrefix: false): "    ├── v1/models (GET, HEAD)".
    const servedPaths = [...served.matchAll(/^[\s│├└─]*(\S+) \(([A-Z, ]+)\)$/gm)].flatMap(([, path, methods]) =>
      methods!.split(', ').filter((m) => m !== 'HEAD').map((m) => `${m} ${path === '/' ? '/' : `/${path!.replace(/:(\w+)/g, '{$1}')}`}`),
    );
    const documented = Object.entries<Record<string, unknown>>(document.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(servedPaths.length).toBeGreaterThan(5);
    for (const route of servedPaths) expect(documented, route).toContain(route);
  });

  it('every error code of the registry appears in the document', async () => {
    const text = JSON.stringify(document);
    const codes = document.paths['/search'].post.responses['400'].content['application/json'].schema.properties.error.properties.code.enum as string[];
    for (const code of codes) expect(text).toContain(code);
    expect(codes).toContain('RAG_PASSAGE_NOT_FOUND');
  });

  it('matches real responses of each route', async () => {
    await expectDocumented('POST', '/search', jsonPost({ query: 'how long are snapshots kept?' }));
    await expectDocumented('POST', '/search', jsonPost({ query: '' }));
    await expectDocumented('POST', '/chat', jsonPost({ query: 'How long are snapshots kept?' }));
    await expectDocumented('POST', '/chat', jsonPost({ query: 'How long are snapshots kept?', stream: true }));
    await expectDocumented('POST', '/chat', jsonPost({ query: 'x', k: 0 }));
    await expectDocumented('POST', '/v1/chat/completions', jsonPost({ model: 'rag', messages: [{ role: 'user', content: 'How long are snapshots kept?' }] }));
    await expectDocumented('POST', '/v1/chat/completions', jsonPost({ model: 'rag', messages: [{ role: 'user', content: 'How long are snapshots kept?' }], stream: true }));
    await expectDocumented('POST', '/v1/chat/completions', jsonPost({ model: 'other', messages: [{ role: 'user', content: 'hi' }] }));
    await expectDocumented('GET', '/v1/models');
    const mcpHeaders = { accept: 'application/json, text/event-stream' };
    await expectDocumented(
      'POST',
      '/mcp',
      jsonPost({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, mcpHeaders),
    );
    await expectDocumented('GET', '/healthz');
    await expectDocumented('GET', '/readyz');
    await expectDocumented('GET', '/metrics');
    await expectDocumented('GET', '/openapi.json');
    await expectDocumented('GET', '/');
    await expectDocumented('GET', '/app.js');
  });
});
