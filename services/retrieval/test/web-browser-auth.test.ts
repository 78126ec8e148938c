import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { startTestStack, type TestStack } from './test-stack.ts';
import { chromiumPresent, launchChromium, openWatchedPage } from './watched-page.ts';

/**
 * The web page in a real Chromium against an API that needs a key (RAG_AUTH_FILE): it asks for the key
 * when the API answers 401, keeps it in sessionStorage and sends it as a Bearer token, streamed /chat included.
 */
const hasChromium = chromiumPresent("the web page's API-key tests are skipped");

const WAIT_MS = 15_000;
const KEY = 'sk-web-3d91f0aa57';

describe.skipIf(!hasChromium)('the web page with API keys, in a real Chromium', () => {
  let browser: Browser;
  let stack: TestStack;
  let page: Page;
  let violations: string[];
  let sentAuthorization: Array<{ path: string; authorization: string | undefined }>;

  beforeAll(async () => {
    const apiKeys = parseApiKeys(`keys:\n  - {name: web-user, sha256: ${hashApiKey(KEY)}, groups: []}\n`, 'keys.yaml');
    stack = await startTestStack({ apiKeys });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  beforeEach(async () => {
    ({ page, violations } = await openWatchedPage(browser, WAIT_MS));
    sentAuthorization = [];
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path === '/search' || path === '/chat') sentAuthorization.push({ path, authorization: request.headers()['authorization'] });
    });
    await page.goto(`${stack.baseUrl}/`, { waitUntil: 'load' });
    await page.getByLabel('Question').fill('How many days a week can I work from home?');
  });

  afterEach(async () => {
    await page?.close();
    expect(violations).toEqual([]);
  });

  async function storedKey(): Promise<string | null> {
    return page.evaluate<string | null>("sessionStorage.getItem('rag-api-key')");
  }

  it('asks for a key on 401, refuses a wrong one, then answers the question with the right one', async () => {
    expect(await page.locator('#key-form').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#key-form:not([hidden])').waitFor();
    expect(await page.locator('#error .code').textContent()).toBe('RAG_UNAUTHENTICATED');
    expect(await page.locator('#answer-panel').isHidden()).toBe(true);
    expect(await page.getByLabel('API key').getAttribute('type')).toBe('password');
    expect(await page.evaluate<boolean>("document.activeElement === document.getElementById('api-key')")).toBe(true);

    await page.getByLabel('API key').fill('sk-wrong');
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.locator('#error .message', { hasText: 'The key is not valid.' }).waitFor();
    expect(await page.locator('#key-form').isVisible()).toBe(true);
    expect(await storedKey()).toBeNull();

    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
    // The question asked before the key is answered, streamed, without asking again.
    await page.locator('#mode:not([hidden])').waitFor();
    expect(await page.locator('#answer').textContent()).toContain('three days a week');
    expect(await page.locator('#citations li[data-label="onboarding.md#1"]').count()).toBe(1);
    expect(await page.locator('#key-form').isHidden()).toBe(true);
    expect(await page.locator('#error').isHidden()).toBe(true);
    expect(await page.getByLabel('API key').inputValue()).toBe('');
    expect(await storedKey()).toBe(KEY);
    expect(sentAuthorization).toEqual([
      { path: '/chat', authorization: undefined },
      { path: '/chat', authorization: 'Bearer sk-wrong' },
      { path: '/chat', authorization: `Bearer ${KEY}` },
    ]);
  });

  it('keeps the key for the tab: after a reload, Search and Ask send it without asking', async () => {
    await page.evaluate(`sessionStorage.setItem('rag-api-key', ${JSON.stringify(KEY)})`);
    await page.reload({ waitUntil: 'load' });
    await page.getByLabel('Question').fill('how long are snapshots kept?');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('#results li').first().waitFor();
    expect(await page.locator('#results li .source').first().textContent()).toBe('backups.md');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#mode:not([hidden])').waitFor();
    expect(await page.locator('#key-form').isHidden()).toBe(true);
    expect(sentAuthorization).toEqual([
      { path: '/search', authorization: `Bearer ${KEY}` },
      { path: '/chat', authorization: `Bearer ${KEY}` },
    ]);
  });

  it('asks again when the stored key is refused, and forgets it', async () => {
    await page.evaluate("sessionStorage.setItem('rag-api-key', 'sk-revoked')");
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('#key-form:not([hidden])').waitFor();
    expect(await page.locator('#error .code').textContent()).toBe('RAG_UNAUTHENTICATED');
    expect(await storedKey()).toBeNull();
    await page.getByLabel('API key').fill(KEY);
    await page.getByLabel('API key').press('Enter');
    await page.locator('#results li').first().waitFor();
    expect(sentAuthorization.map((sent) => sent.authorization)).toEqual(['Bearer sk-revoked', `Bearer ${KEY}`]);
  });
});
