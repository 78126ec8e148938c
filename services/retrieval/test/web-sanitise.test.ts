/**
 * The web page inserts an answer's Markdown only after DOMPurify has cleaned it, in a real Chromium
 * against the real API. Raw HTML is already escaped by the page's marked renderer, but a Markdown link
 * is not raw HTML: marked 18 turns `[text](javascript:...)` into `<a href="javascript:...">` as written
 * (checked with marked.parse), and only the sanitiser removes such a URL
 * (https://github.com/cure53/DOMPurify#what-does-it-do).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatModel, ChatStreamEvent } from '@rag/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumPresent, launchChromium, openWatchedPage } from './watched-page.ts';
import { startTestStack, type TestStack } from './test-stack.ts';

const hasChromium = chromiumPresent("the web page's sanitising test is skipped");
const WAIT_MS = 15_000;

/** What a poisoned document could make a model repeat: a script link, an image handler, an SVG handler. */
const HOSTILE_ANSWER = [
  'Staff may work remotely up to three days a week [onboarding.md#1].',
  '',
  'Read [the policy](javascript:document.title=%27pwned-link%27) first [onboarding.md#1].',
  '',
  '<img src=x onerror="document.title=\'pwned-img\'">',
  '',
  'Also <svg onload="document.title=\'pwned-svg\'"></svg> here.',
  '',
].join('\n');

/**
 * A document written to attack the page through its passages, which are rendered as Markdown as answers
 * are: a script element, a script URL in a link and in an image, event handlers on raw HTML.
 */
const HOSTILE_DOCUMENT = [
  '# Security policy',
  '',
  'Read [the security policy](javascript:document.title=%27pwned-passage-link%27) before anything else.',
  '',
  '<script>document.title = "pwned-script"</script>',
  '',
  'The security policy applies to every laptop. <img src=x onerror="document.title=\'pwned-passage-img\'">',
  '',
  '<a href="#" onclick="document.title=\'pwned-click\'">Click</a> to accept the security policy.',
  '',
  '![badge](javascript:document.title=%27pwned-badge%27)',
  '',
].join('\n');

/**
 * Nothing in `selector` can run: no script URL (an image's included: a Markdown image keeps its element,
 * without the URL), no event handler attribute, no script or SVG element.
 */
async function expectInert(page: Page, selector: string): Promise<void> {
  const scriptUrls = await page.locator(`${selector} [href], ${selector} [src]`).evaluateAll((nodes) =>
    nodes.map((node) => node.getAttribute('href') ?? node.getAttribute('src') ?? '').filter((url) => /^\s*javascript:/i.test(url)),
  );
  expect(scriptUrls).toEqual([]);
  const handlers = await page.locator(`${selector} *`).evaluateAll((nodes) => nodes.flatMap((node) => node.getAttributeNames().filter((name: string) => name.startsWith('on'))));
  expect(handlers).toEqual([]);
  expect(await page.locator(`${selector} script, ${selector} svg`).count()).toBe(0);
}

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
  let hostilePassages: TestStack;
  let folder: string;
  let page: Page;
  let violations: string[];

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'rag-hostile-'));
    await writeFile(join(folder, 'hostile.md'), HOSTILE_DOCUMENT);
    [stack, hostilePassages] = await Promise.all([startTestStack({ chatModel: new HostileChatModel() }), startTestStack({ folder })]);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([stack?.close(), hostilePassages?.close()]);
    if (folder) await rm(folder, { recursive: true, force: true });
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

  it('keeps passages as inert as answers: in Search results and in a cited passage', async () => {
    await page.goto(`${hostilePassages.baseUrl}/`, { waitUntil: 'load' });
    await page.getByLabel('Question').fill('security policy');
    await page.getByRole('button', { name: 'Search' }).click();
    const first = page.locator('#results > li').first();
    await first.waitFor();
    await first.locator('summary').click();
    // Rendered as Markdown (the link text is a link, the raw HTML shown as text), and inert.
    expect(await first.locator('.text a', { hasText: 'the security policy' }).count()).toBe(1);
    expect(await first.locator('.text').textContent()).toContain('<script>');
    expect(await first.locator('.text').textContent()).toContain('onerror=');
    await expectInert(page, '#results');

    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#mode:not([hidden])').waitFor();
    await page.locator('#answer a.cite').first().click();
    await page.locator('#passage-panel:not([hidden])').waitFor();
    expect(await page.locator('#passage-text a', { hasText: 'the security policy' }).count()).toBe(1);
    await expectInert(page, '#passage-text');
    await expectInert(page, '#answer');

    for (const link of await page.locator('#passage-text a, #results .text a').all()) if (await link.isVisible()) await link.click();
    expect(await page.title()).not.toMatch(/pwned/);
  });
});
