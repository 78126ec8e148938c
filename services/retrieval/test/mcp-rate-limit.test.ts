/**
 * POST /mcp against a key's rate limit: every JSON-RPC message costs one unit, so a JSON-RPC batch (an
 * array of messages, allowed by MCP 2025-03-26 and still accepted by the SDK,
 * https://modelcontextprotocol.io/specification/2025-03-26/basic/transports#sending-messages-to-the-server)
 * cannot run more tool calls than the key may make requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { postJson, startTestStack, type TestStack } from './test-stack.ts';

const LIMIT = 5;
const BATCH_KEY = 'sk-mcp-batch-71c0e2';
const SINGLE_KEY = 'sk-mcp-single-44a9d8';
const SEARCH_KEY = 'sk-mcp-search-0f3b66';
const keysFile = `
keys:
  - {name: batcher, sha256: ${hashApiKey(BATCH_KEY)}, groups: [], rate_limit_per_minute: ${LIMIT}}
  - {name: single, sha256: ${hashApiKey(SINGLE_KEY)}, groups: [], rate_limit_per_minute: ${LIMIT}}
  - {name: searcher, sha256: ${hashApiKey(SEARCH_KEY)}, groups: [], rate_limit_per_minute: ${LIMIT}}
`;

let stack: TestStack;
/** No keys file: the per-address limit (RAG_RATE_LIMIT_PER_ADDRESS) is the brake. */
let open: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ apiKeys: parseApiKeys(keysFile, 'keys.yaml') });
  open = await startTestStack({ addressRateLimit: { perMinute: LIMIT } });
});

afterAll(async () => {
  await stack?.close();
  await open?.close();
});

/** A tools/call message as the streamable HTTP transport carries it; ids tell the answers apart. */
function listSources(id: number) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_sources', arguments: {} } };
}

// The transport requires both media types in Accept (2025-03-26 and 2025-06-18 alike).
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' };

function postMcp(key: string, body: unknown) {
  return postJson(stack.baseUrl, '/mcp', body, { authorization: `Bearer ${key}`, ...MCP_HEADERS });
}

describe('/mcp and the key\'s rate limit', () => {
  it('charges a batch one unit per message: within the budget it runs, past it the whole POST is 429', async () => {
    const within = await postMcp(BATCH_KEY, [listSources(1), listSources(2), listSources(3)]);
    expect(within.status).toBe(200);
    expect(within.body.map((answer: any) => answer.id).sort()).toEqual([1, 2, 3]);
    expect(within.body.every((answer: any) => answer.result && !answer.result.isError)).toBe(true);
    expect(within.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 3));

    const past = await postMcp(BATCH_KEY, [listSources(4), listSources(5), listSources(6)]);
    expect(past.status).toBe(429);
    expect(past.body).toEqual({ error: { code: 'RAG_RATE_LIMITED', message: expect.stringContaining('this request carries 3') } });
    expect(Number(past.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('refuses a batch larger than the key\'s whole budget', async () => {
    const batch = Array.from({ length: 100 }, (_, index) => listSources(index + 1));
    const refused = await postMcp(SINGLE_KEY, batch);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RAG_RATE_LIMITED');
  });

  it('counts single messages like requests, and shares the budget with /search', async () => {
    for (let call = 1; call < LIMIT; call++) expect((await postMcp(SEARCH_KEY, listSources(call))).status, `message ${call}`).toBe(200);
    expect((await postJson(stack.baseUrl, '/search', { query: 'snapshots' }, { authorization: `Bearer ${SEARCH_KEY}` })).status).toBe(200);
    const refused = await postMcp(SEARCH_KEY, listSources(LIMIT + 1));
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RAG_RATE_LIMITED');
  });
});

describe('/mcp and the per-address limit of an API without keys', () => {
  it('charges a batch one unit per message from the address\'s budget, shared with /search', async () => {
    const within = await postJson(open.baseUrl, '/mcp', [listSources(1), listSources(2), listSources(3)], MCP_HEADERS);
    expect(within.status).toBe(200);
    expect(within.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 3));
    expect((await postJson(open.baseUrl, '/search', { query: 'snapshots' })).status).toBe(200);
    const past = await postJson(open.baseUrl, '/mcp', [listSources(4), listSources(5)], MCP_HEADERS);
    expect(past.status).toBe(429);
    expect(past.body.error.code).toBe('RAG_ADDRESS_RATE_LIMITED');
    expect(Number(past.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
