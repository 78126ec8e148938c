/**
 * How the web page renders answers, in a real Chromium against the real API: Markdown made safe,
 * citations that open their passage, Search with the query's terms highlighted, the "not covered"
 * state and the key prompt on 401. A screenshot of each state is written to test-output/web/.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { UNSUPPORTED_MARK, type ChatModel, type ChatStreamEvent } from '@rag/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { chromiumPresent, launchChromium, openWatchedPage } from './watched-page.ts';
import { startTestStack, type TestStack } from './test-stack.ts';

const hasChromium = chromiumPresent("the web page's rendering tests are skipped");
const WAIT_MS = 15_000;
const screenshotFolder = fileURLToPath(new URL('../../../test-output/web/', import.meta.url));
const KEY = 'sk-web-render-5e1f';

/** Markdown with a list, emphasis, a citation and markup that must never run. */
const MARKDOWN_ANSWER = '**Up to three days** a week, everyone may work from home.\n\n- from home [onboarding.md#1]\n- <img src=x onerror="document.title=\'pwned\'"> never rendered\n';

class MarkdownChatModel implements ChatModel {
  readonly modelId = 'markdown-test-model';
  async complete() {
    return { content: MARKDOWN_ANSWER };
  }
  async *stream(): AsyncIterable<ChatStreamEvent> {
    yield { type: 'token', text: MARKDOWN_ANSWER };
    yield { type: 'done' };
  }
}

describe.skipIf(!hasChromium)('the web page renders answers (real Chromium)', () => {
  let browser: Browser;
  let extractive: TestStack;
  let llm: TestStack;
  let keyed: TestStack;
  let page: Page;
  let violations: string[];

  beforeAll(async () => {
    [extractive, llm, keyed] = await Promise.all([
      startTestStack(),
      startTestStack({ chatModel: new MarkdownChatModel() }),
      startTestStack({ apiKeys: parseApiKeys(`keys:\n  - {name: web, sha256: ${hashApiKey(KEY)}, groups: []}\n`, 'keys.yaml') }),
    ]);
    browser = await launchChromium();
    await mkdir(screenshotFolder, { recursive: true });
    console.log(`screenshots of the web page's states: ${screenshotFolder}`);
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([extractive?.close(), llm?.close(), keyed?.close()]);
  });

  beforeEach(async () => {
    ({ page, violations } = await openWatchedPage(browser, WAIT_MS));
  });

  afterEach(async () => {
    await page?.close();
    expect(violations).toEqual([]);
  });

  async function ask(stack: TestStack, question: string, button = 'Ask'): Promise<void> {
    await page.goto(`${stack.baseUrl}/`, { waitUntil: 'load' });
    await page.getByLabel('Question').fill(question);
    await page.getByRole('button', { name: button }).click();
  }

  async function screenshot(name: string): Promise<void> {
    await writeFile(`${screenshotFolder}${name}.png`, await page.screenshot({ fullPage: true }));
  }

  it('renders the answer as sanitised Markdown, with citations as links that open the passage', async () => {
    await ask(llm, 'How many days a week can I work from home?');
    await page.locator('#mode:not([hidden])').waitFor();
    expect(await page.locator('#answer strong').textContent()).toBe('Up to three days');
    expect(await page.locator('#answer li').count()).toBe(2);
    expect(await page.locator('#answer img').count()).toBe(0);
    expect(await page.locator('#answer').textContent()).toContain('<img src=x');
    expect(await page.title()).not.toBe('pwned');
    // The markup's line says nothing the passages say: the server marks it, and the page flags the mark.
    expect(await page.locator('#answer li .unsupported').textContent()).toBe(UNSUPPORTED_MARK);
    const link = page.locator('#answer li a.cite');
    expect(await link.textContent()).toBe('[onboarding.md#1]');
    expect(await page.locator('#not-covered').isHidden()).toBe(true);
    await screenshot('answer-markdown');
    await link.click();
    await page.locator('#passage-panel:not([hidden])').waitFor();
    expect(await page.locator('#passage-label').textContent()).toBe('onboarding.md#1');
    expect(await page.locator('#passage-text').textContent()).toContain('three days a week');
    await screenshot('cited-passage');
  });

  it('highlights the query\'s terms in Search results', async () => {
    await ask(extractive, 'security training', 'Search');
    const first = page.locator('#results li').first();
    await first.waitFor();
    await first.locator('summary').click();
    const marks = await first.locator('mark').allTextContents();
    expect(marks.length).toBeGreaterThan(0);
    for (const mark of marks) expect(['security', 'training']).toContain(mark.toLowerCase());
    await screenshot('search-highlighted');
  });

  it('says when the documents do not cover the question', async () => {
    await ask(extractive, 'What is the recipe for a chocolate cake?');
    await page.locator('#not-covered:not([hidden])').waitFor();
    expect(await page.locator('#answer a.cite').count()).toBe(0);
    await screenshot('not-covered');
  });

  it('asks for a key when the API answers 401, then answers', async () => {
    await ask(keyed, 'How many days a week can I work from home?');
    await page.locator('#key-form:not([hidden])').waitFor();
    expect(await page.locator('#error .code').textContent()).toBe('RAG_UNAUTHENTICATED');
    await screenshot('key-prompt');
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.locator('#mode:not([hidden])').waitFor();
    expect(await page.locator('#answer a.cite').count()).toBeGreaterThan(0);
    // The cited passage is read with the same key.
    await page.locator('#answer a.cite').first().click();
    await page.locator('#passage-panel:not([hidden])').waitFor();
    await screenshot('answer-with-key');
  });
});
