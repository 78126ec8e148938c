/**
 * RAG_AUTH_FILE over real HTTP: the real app on port 0 with a keys file, as a client sees it.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@rag/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { postJson, readJson, startTestStack, type TestStack } from './test-stack.ts';

const SUPPORT_KEY = 'sk-support-4f1c9a7e2b8d4c6f';
const LIMITED_A_KEY = 'sk-limited-a-93e1d2';
const LIMITED_B_KEY = 'sk-limited-b-5c7a11';
const LIMIT = 3;
/** The rate limit's window, shortened from a minute so that a test can see it reset. */
const WINDOW_MS = 2000;

const keysFile = `
keys:
  - name: support-bot
    sha256: ${hashApiKey(SUPPORT_KEY)}
    groups: [support]
  - name: limited-a
    sha256: ${hashApiKey(LIMITED_A_KEY)}
    groups: []
    rate_limit_per_minute: ${LIMIT}
  - name: limited-b
    sha256: ${hashApiKey(LIMITED_B_KEY)}
    groups: []
    rate_limit_per_minute: ${LIMIT}
`;

const QUESTION = { query: 'How many days a week can I work from home?' };

let stack: TestStack;
let logDir: string;
let logFile: string;
let logger: ReturnType<typeof createLogger>;

beforeAll(async () => {
  logDir = await mkdtemp(join(tmpdir(), 'rag-auth-log-'));
  logFile = join(logDir, 'api.log');
  logger = createLogger('info', { format: 'json', destination: logFile });
  stack = await startTestStack({ apiKeys: parseApiKeys(keysFile, 'keys.yaml', { windowMs: WINDOW_MS }), logger });
});

afterAll(async () => {
  await stack.close();
  await rm(logDir, { recursive: true, force: true });
});

function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

async function logLines(): Promise<string> {
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
  return readFile(logFile, 'utf8');
}

describe('without a valid key', () => {
  it.each([
    ['no Authorization header', {}, 'Bearer realm="rag"'],
    ['a wrong key', bearer('sk-not-a-key'), 'Bearer realm="rag", error="invalid_token"'],
    ['another scheme', { authorization: `Basic ${Buffer.from(`user:${SUPPORT_KEY}`).toString('base64')}` }, 'Bearer realm="rag", error="invalid_token"'],
    ['the key without a scheme', { authorization: SUPPORT_KEY }, 'Bearer realm="rag", error="invalid_token"'],
    ['Bearer and nothing', { authorization: 'Bearer ' }, 'Bearer realm="rag", error="invalid_token"'],
    ['two tokens', { authorization: `Bearer ${SUPPORT_KEY} ${SUPPORT_KEY}` }, 'Bearer realm="rag", error="invalid_token"'],
    ['the stored hash instead of the key', bearer(hashApiKey(SUPPORT_KEY)), 'Bearer realm="rag", error="invalid_token"'],
  ])('/search with %s answers 401 RAG_UNAUTHENTICATED in our shape', async (_name, headers, challenge) => {
    const { status, headers: responseHeaders, body } = await postJson(stack.baseUrl, '/search', QUESTION, headers);
    expect(status).toBe(401);
    expect(responseHeaders.get('www-authenticate')).toBe(challenge);
    expect(Object.keys(body)).toEqual(['error']);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
    expect(body.error.code).toBe('RAG_UNAUTHENTICATED');
    expect(body.error.message).toContain('Authorization: Bearer');
    expect(body).not.toHaveProperty('results');
  });

  it('/chat answers 401 too, streamed or not, before any event', async () => {
    const plain = await postJson(stack.baseUrl, '/chat', QUESTION);
    expect(plain.status).toBe(401);
    expect(plain.body.error.code).toBe('RAG_UNAUTHENTICATED');
    const streamed = await postJson(stack.baseUrl, '/chat', { ...QUESTION, stream: true }, { accept: 'text/event-stream', ...bearer('sk-wrong') });
    expect(streamed.status).toBe(401);
    expect(streamed.headers.get('content-type')).toContain('application/json');
    expect(streamed.body.error.code).toBe('RAG_UNAUTHENTICATED');
  });

  it('leaves the probes, the metrics and the web page open', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/', '/app.js']) {
      const response = await fetch(`${stack.baseUrl}${path}`);
      expect(response.status, path).toBe(200);
      await response.arrayBuffer();
    }
  });

  it('answers an unknown route 404, with or without a key', async () => {
    for (const headers of [{}, bearer(SUPPORT_KEY)]) {
      const response = await fetch(`${stack.baseUrl}/nowhere`, { headers });
      expect(response.status).toBe(404);
      expect((await readJson(response)).error.code).toBe('RAG_NOT_FOUND');
    }
  });
});

describe('with a valid key', () => {
  it('/search answers 200 with results', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/search', QUESTION, bearer(SUPPORT_KEY));
    expect(status).toBe(200);
    expect(body.results[0].source).toBe('onboarding.md');
  });

  it('accepts the scheme in any case', async () => {
    const { status } = await postJson(stack.baseUrl, '/search', QUESTION, { authorization: `bearer ${SUPPORT_KEY}` });
    expect(status).toBe(200);
  });

  it('/chat answers 200 with a cited answer', async () => {
    const { status, body } = await postJson(stack.baseUrl, '/chat', QUESTION, bearer(SUPPORT_KEY));
    expect(status).toBe(200);
    expect(body.answer).toContain('three days a week');
    expect(body.citations[0].source).toBe('onboarding.md');
  });

  it('/chat streams its events', async () => {
    const response = await fetch(`${stack.baseUrl}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...bearer(SUPPORT_KEY) },
      body: JSON.stringify(QUESTION),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const frames = await response.text();
    expect(frames).toMatch(/^event: citations\ndata: \{"citations":\[\{"source":"onboarding.md"/);
    const done = /event: done\ndata: (.+)\n/.exec(frames)?.[1];
    expect(JSON.parse(done ?? '{}').answer).toContain('three days a week');
  });

  it('logs the key\'s name on the request line, never the key or its hash', async () => {
    await postJson(stack.baseUrl, '/search', { query: 'log line check' }, bearer(SUPPORT_KEY));
    const lines = (await logLines()).split('\n').filter((line) => line.includes('"msg":"request"'));
    const searches = lines.map((line) => JSON.parse(line)).filter((line) => line.route === '/search' && line.status === 200);
    expect(searches.length).toBeGreaterThan(0);
    expect(searches.every((line) => line.key === 'support-bot')).toBe(true);
    const everything = await logLines();
    expect(everything).not.toContain(SUPPORT_KEY);
    expect(everything).not.toContain(hashApiKey(SUPPORT_KEY));
  });

  it('counts requests on /metrics, which needs no key, without the key, its hash or its name', async () => {
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/rag_retrieval_requests_total\{route="\/search",outcome="ok"\} [1-9]/);
    expect(metrics).not.toContain(SUPPORT_KEY);
    expect(metrics).not.toContain(hashApiKey(SUPPORT_KEY));
    for (const name of ['support-bot', 'limited-a', 'limited-b']) expect(metrics).not.toContain(name);
    expect(metrics).not.toMatch(/\bkey="/);
  });
});

describe('rate limits, per key', () => {
  async function search(key: string) {
    return postJson(stack.baseUrl, '/search', { query: 'snapshots' }, bearer(key));
  }

  it('answers 429 RAG_RATE_LIMITED with Retry-After past the key\'s limit, keeps other keys\' budgets apart, and resets', async () => {
    // Start at the beginning of a fresh window for both keys, so that the limit is reached within one.
    for (let attempt = 0; attempt < LIMIT; attempt++) {
      const { status, headers } = await search(LIMITED_A_KEY);
      expect(status, `request ${attempt + 1}`).toBe(200);
      expect(headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
      expect(headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - attempt - 1));
    }
    const refused = await search(LIMITED_A_KEY);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { code: 'RAG_RATE_LIMITED', message: expect.stringContaining('limited-a') } });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 1000));
    // /chat shares the key's budget.
    expect((await postJson(stack.baseUrl, '/chat', QUESTION, bearer(LIMITED_A_KEY))).status).toBe(429);

    // Another key has its own budget, untouched by limited-a's.
    for (let attempt = 0; attempt < LIMIT; attempt++) expect((await search(LIMITED_B_KEY)).status).toBe(200);
    expect((await search(LIMITED_B_KEY)).status).toBe(429);

    // The probes are never limited.
    expect((await fetch(`${stack.baseUrl}/healthz`)).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 50));
    const again = await search(LIMITED_A_KEY);
    expect(again.status).toBe(200);
    expect(again.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1));
  });

  it('logs a refused request under the key\'s name and counts it on /metrics without it', async () => {
    const lines = (await logLines())
      .split('\n')
      .filter((line) => line.includes('"msg":"request"'))
      .map((line) => JSON.parse(line));
    expect(lines.some((line) => line.status === 429 && line.key === 'limited-a')).toBe(true);
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/rag_retrieval_requests_total\{route="\/search",outcome="client_error"\} [1-9]/);
    expect(metrics).not.toContain('limited-b');
  });
});
