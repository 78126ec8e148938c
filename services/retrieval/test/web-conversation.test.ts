import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumPresent, launchChromium, openWatchedPage } from './watched-page.ts';
import { startTestStack, type TestStack } from './test-stack.ts';

/** A conversation on the web page, in a real Chromium (Debian's package) driven by playwright-core. */
const hasChromium = chromiumPresent("the web page's conversation test is skipped");

const WAIT_MS = 15_000;
const FIRST = 'How often are database snapshots taken?';
const FOLLOW_UP = 'And how do I bring one back?';

describe.skipIf(!hasChromium)('a conversation on the web page', () => {
  let browser: Browser;
  let stack: TestStack;
  let page: Page;
  let violations: string[];
  const chatBodies: any[] = [];

  beforeAll(async () => {
    stack = await startTestStack();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  beforeEach(async () => {
    ({ page, violations } = await openWatchedPage(browser, WAIT_MS));
    page.on('request', (request) => {
      if (request.url().endsWith('/chat')) chatBodies.push(request.postDataJSON());
    });
  });

  afterEach(async () => {
    await page?.close();
    expect(violations).toEqual([]);
  });


  it('keeps a thread: a follow-up under the answer is asked with the earlier turn, and New conversation clears it', async () => {
    await page.goto(`${stack.baseUrl}/`, { waitUntil: 'load' });
    await page.getByLabel('Question', { exact: true }).fill(FIRST);
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#follow-up-form:not([hidden])').waitFor();
    expect(await page.locator('#thread').isHidden()).toBe(true);
    const firstAnswer = (await page.locator('#answer').textContent()) ?? '';

    await page.getByLabel('Follow-up', { exact: true }).fill(FOLLOW_UP);
    await page.getByRole('button', { name: 'Follow up' }).click();
    await page.locator('#search-query:not([hidden])').waitFor();
    await page.locator('#follow-up-form:not([hidden])').waitFor();
    // The earlier turn moved into the thread; the follow-up was sent with it and searched with its words.
    expect(await page.locator('#thread-turns .turn-question').allTextContents()).toEqual([FIRST]);
    expect(firstAnswer).toMatch(/backups\.md#\d/);
    expect(await page.locator('#thread-turns .turn-answer').first().textContent()).toMatch(/backups\.md#\d/);
    expect(chatBodies.at(-1)).toMatchObject({ query: FOLLOW_UP, history: [{ question: FIRST }] });
    expect(await page.locator('#search-query').textContent()).toContain(FIRST);
    expect(await page.locator('#citations li[data-label^="backups.md#"]').count()).toBeGreaterThan(0);
    expect(await page.locator('#not-covered').isHidden()).toBe(true);

    await page.getByRole('button', { name: 'New conversation' }).click();
    expect(await page.locator('#thread').isHidden()).toBe(true);
    expect(await page.locator('#answer-panel').isHidden()).toBe(true);
    // A new conversation: the same follow-up, asked from the question box, goes without history.
    await page.getByLabel('Question', { exact: true }).fill(FOLLOW_UP);
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#follow-up-form:not([hidden])').waitFor();
    expect(chatBodies.at(-1)).toEqual({ query: FOLLOW_UP, stream: true });
    expect(await page.locator('#not-covered').isHidden()).toBe(false);
  });
});
