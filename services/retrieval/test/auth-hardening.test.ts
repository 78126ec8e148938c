/**
 * Keys as a client presents them, over real HTTP: a key is compared byte for byte (its case matters), and
 * an address that keeps presenting wrong keys is told to wait (429 RAG_AUTH_THROTTLED) while valid keys
 * from it still pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApiKeys } from '../src/auth/api-keys.ts';
import { FAILED_AUTH_PER_MINUTE } from '../src/auth/failed-auth-throttle.ts';
import { postJson, startTestStack, type TestStack } from './test-stack.ts';

const MIXED_CASE_KEY = 'sk-MiXeD-Case-9fQ2';
/** `printf %s sk-MiXeD-Case-9fQ2 | sha256sum`, written out so that the test does not share the code it checks. */
const MIXED_CASE_SHA256 = '24bf5486b02b0a36baa2a9001873b48a9869dfbc6b2d1578e65f79f75ed73edb';
/** The failure window, shortened from a minute so that a test can see it reset. */
const WINDOW_MS = 2000;

let stack: TestStack;

beforeAll(async () => {
  const keysFile = `keys:\n  - {name: mixed, sha256: ${MIXED_CASE_SHA256}, groups: []}\n`;
  stack = await startTestStack({ apiKeys: parseApiKeys(keysFile, 'keys.yaml', { windowMs: WINDOW_MS }) });
});

afterAll(async () => {
  await stack?.close();
});

function search(key: string | undefined) {
  return postJson(stack.baseUrl, '/search', { query: 'snapshots' }, key === undefined ? {} : { authorization: `Bearer ${key}` });
}

describe('API keys', () => {
  it('match only as written: the same key in another case is refused', async () => {
    expect((await search(MIXED_CASE_KEY)).status).toBe(200);
    for (const variant of [MIXED_CASE_KEY.toLowerCase(), MIXED_CASE_KEY.toUpperCase()]) {
      const refused = await search(variant);
      expect(refused.status, variant).toBe(401);
      expect(refused.body.error.code).toBe('RAG_UNAUTHENTICATED');
    }
  });
});

describe('wrong keys from one address', () => {
  it('get 401 up to the budget, then 429 RAG_AUTH_THROTTLED with Retry-After; a valid key still passes; the window resets', async () => {
    // Start from a fresh window: the case test above spent two failures in the previous one.
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 100));
    for (let attempt = 1; attempt <= FAILED_AUTH_PER_MINUTE; attempt++) {
      expect((await search(`sk-guess-${attempt}`)).status, `guess ${attempt}`).toBe(401);
    }
    const throttled = await search('sk-guess-one-more');
    expect(throttled.status).toBe(429);
    expect(throttled.body.error.code).toBe('RAG_AUTH_THROTTLED');
    const retryAfter = Number(throttled.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 1000));

    // The holder of a valid key behind the same address is not locked out.
    expect((await search(MIXED_CASE_KEY)).status).toBe(200);
    // A request without credentials guesses nothing: it is told to authenticate.
    expect((await search(undefined)).status).toBe(401);

    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    expect((await search('sk-guess-after-the-wait')).status).toBe(401);
  });
});
