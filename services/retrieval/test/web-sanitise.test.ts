/**
 * The web page inserts an answer's Markdown only after DOMPurify has cleaned it, in a real Chromium
 * against the real API. Raw HTML is already escaped by the page's marked renderer, but a Markdown link
 * is not raw HTML: marked 18 turns `[text](javascript:...)` into `<a href="javascript:...">` as written
 * (checked with marked.parse), and only the sanitiser removes such a URL
 * (https://github.com/cure53/DOMPurify#what-does-it-do).
 */
import { existsSync } from 'node:fs';
import type { ChatModel, ChatStreamEvent } from '@rag/core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openWatchedPage } from './watched-page.ts';
import { startTestStack, type TestStack } from './test-stack.ts';

const chromiumPath = '/usr/bin/chromium';
const hasChromium = existsSync(chromiumPath);
if (!hasChromium) console.warn(`${chromiumPath} is absent (Debian package chromium): the web page's sanitising test is skipped`);
const WAIT_MS = 15_000;

/** What a poisoned document could make a model repeat: a script link, an image handler, an SVG handler. */
const HOSTILE_ANSWER = [
  'Read [the policy](javascript:document.title=%27pwned-link%27) first [onboarding.md#1].',
  '',
  '<img src=x onerror="document.title=\'pwned-img\'">',
  '',
  'Also <svg onload="document.title=\'pwned-svg\'"></svg> here.',
  '',
].join('\n');

class HostileChatModel implements ChatModel {
  readonly modelId = 'hostile-test-model';
  async complete() {
    return { content: HOSTILE_ANSWER };
  }
  async *stream(): AsyncIterable<ChatStreamEvent> {
    yield { type: 'token', text: HOSTILE_ANSWER };
    yield { type: 'done' };
  }
}

describe.skipIf(!hasChromium)('the web page sanitises answers (real Chromium)', () => {
  let browser: Browser;
  let stack: TestStack;
  let page: Page;
  let violations: string[];

  beforeAll(async () => {
    stack = await startTestStack({ chatModel: new HostileChatModel() });
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'], timeout: 30_000 });
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  beforeEach(async () => {
    ({ page, violations } = await openWatchedPage(browser, WAIT_MS));
  });

  afterEach(async () => {
    await page?.close();
    expect(violations).toEqual([]);
  });

  it('keeps no script URL and no event handler of an answer in the page', async () => {
    await page.goto(`${stack.baseUrl}/`, { waitUntil: 'load' });
    await page.getByLabel('Question').fill('How many days a week can I work from home?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#mode:not([hidden])').waitFor();

    // The answer is there, its link text and citation included...
    expect(await page.locator('#answer').textContent()).toContain('the policy');
    expect(await page.locator('#answer a.cite').count()).toBe(1);
    // ...but nothing in it can run.
    const scriptUrls = await page.locator('#answer a').evaluateAll((links) => links.map((link) => link.getAttribute('href') ?? '').filter((href) => /^\s*javascript:/i.test(href)));
    expect(scriptUrls).toEqual([]);
    const handlers = await page.locator('#answer *').evaluateAll((nodes) => nodes.flatMap((node) => node.getAttributeNames().filter((name: string) => name.startsWith('on'))));
    expect(handlers).toEqual([]);
    expect(await page.locator('#answer img, #answer svg').count()).toBe(0);

    // Following every link of the answer runs nothing either.
    for (const link of await page.locator('#answer a:not(.cite)').all()) await link.click();
    expect(await page.title()).not.toMatch(/pwned/);
  });
});
