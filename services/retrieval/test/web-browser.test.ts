import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChatMessage, ChatModel, ChatStreamEvent } from '@rag/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumPresent, launchChromium, openWatchedPage } from './watched-page.ts';
import { startTestStack, type TestStack } from './test-stack.ts';

/**
 * The web page in a real Chromium (Debian's package), driven by playwright-core, against the real API
 * over the fixture handbook. Set RAG_WEB_SCREENSHOTS=<folder> to keep screenshots of the page.
 */
const hasChromium = chromiumPresent("the web page's browser tests are skipped");

/** Every wait is bounded: a broken page fails within this, never hangs. */
const WAIT_MS = 15_000;

/** A chat model that streams its first sentence and the start of the next, then waits for the test before finishing. */
class GatedChatModel implements ChatModel {
  readonly modelId = 'gated-test-model';
  private release: () => void = () => {};
  private gate = Promise.resolve();

  close(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.release();
  }

  async complete(): Promise<{ content: string }> {
    return { content: 'Up to three days a week [onboarding.md#1].' };
  }

  async *stream(_messages: ChatMessage[]): AsyncIterable<ChatStreamEvent> {
    yield { type: 'token', text: 'Staff may work remotely up to three days a week [onboarding.md#1]. Ask ' };
    await this.gate;
    yield { type: 'token', text: 'your manager first, as <b>the</b> handbook says [nowhere.md#9].' };
    yield { type: 'done', usage: { promptTokens: 321, completionTokens: 23, totalTokens: 344 } };
  }
}

async function screenshot(page: Page, name: string): Promise<void> {
  const image = await page.screenshot({ fullPage: true });
  expect(image.subarray(1, 4).toString('latin1')).toBe('PNG');
  const folder = process.env['RAG_WEB_SCREENSHOTS'];
  if (folder) {
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, `${name}.png`), image);
  }
}

async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().textContent({ timeout: WAIT_MS })) ?? '';
}

describe.skipIf(!hasChromium)('the web page in a real Chromium', () => {
  let browser: Browser;
  let extractive: TestStack;
  let llm: TestStack;
  const chatModel = new GatedChatModel();
  let page: Page;
  let violations: string[];

  beforeAll(async () => {
    [extractive, llm] = await Promise.all([startTestStack(), startTestStack({ chatModel })]);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await extractive?.close();
    await llm?.close();
  });

  beforeEach(async () => {
    ({ page, violations } = await openWatchedPage(browser, WAIT_MS));
  });

  afterEach(async () => {
    await page?.close();
    expect(violations).toEqual([]);
  });

  async function open(stack: TestStack): Promise<void> {
    await page.goto(`${stack.baseUrl}/`, { waitUntil: 'load' });
    await page.getByLabel('Question').fill('How many days a week can I work from home?');
  }

  it('applies its inline style under the Content-Security-Policy and labels the controls', async () => {
    await open(extractive);
    // The style block's hash is in the policy: without it the primary button would have no background.
    const background = await page.evaluate<string>("getComputedStyle(document.querySelector('#ask')).backgroundColor");
    expect(background).not.toBe('rgba(0, 0, 0, 0)');
    expect(await page.getByRole('button', { name: 'Ask' }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Search' }).isVisible()).toBe(true);
    expect(await page.locator('#answer').getAttribute('aria-live')).toBe('polite');
  });

  it('Ask streams an extractive answer with its sources', async () => {
    await open(extractive);
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#mode:not([hidden])').waitFor();
    expect(await text(page, '#mode')).toBe('extractive');
    expect(await text(page, '#answer')).toContain('three days a week');
    expect(await page.locator('#citations li[data-label="onboarding.md#1"]').count()).toBe(1);
    expect(await text(page, '#citations')).toContain('onboarding.md#1');
    expect(await page.locator('#usage').isHidden()).toBe(true);
    expect(await page.locator('#error').isHidden()).toBe(true);
    await screenshot(page, 'ask-extractive');
  });

  it('Search lists the ranked passages, collapsed, without the source line', async () => {
    await open(extractive);
    await page.getByRole('button', { name: 'Search' }).click();
    const first = page.locator('#results li').first();
    await first.waitFor();
    expect(await first.locator('.source').textContent()).toBe('onboarding.md');
    expect(await first.locator('.chunk').textContent()).toMatch(/^chunk \d+$/);
    expect(await first.locator('.score').textContent()).toMatch(/^score \d+\.\d{4}$/);
    const passage = first.locator('.text');
    expect(await passage.isVisible()).toBe(false);
    await first.locator('summary').click();
    expect(await passage.isVisible()).toBe(true);
    const body = (await passage.textContent()) ?? '';
    expect(body).not.toMatch(/^onboarding\.md/);
    expect(body.length).toBeGreaterThan(0);
    expect(await page.locator('#answer-panel').isHidden()).toBe(true);
    await screenshot(page, 'search');
  });

  it('submitting an empty question with the keyboard shows the API error code and message', async () => {
    await open(extractive);
    await page.getByLabel('Question').fill('');
    await page.getByLabel('Question').press('Enter');
    await page.locator('#error:not([hidden])').waitFor();
    expect(await text(page, '#error .code')).toBe('RAG_INVALID_QUERY');
    expect(await text(page, '#error .message')).toContain('"query" must be a non-empty string');
    expect(await page.getByRole('alert').count()).toBe(1);
    await screenshot(page, 'empty-question');
  });

  it('renders tokens as they arrive, then the llm badge, token usage and unknown citations, as text', async () => {
    chatModel.close();
    await open(llm);
    await page.getByRole('button', { name: 'Ask' }).click();
    // The first sentence is on screen while the model is still held back: the stream is rendered live,
    // a sentence at a time (each checked against the passages before it is sent).
    await page.locator('#answer', { hasText: 'Staff may work remotely' }).waitFor();
    expect(await page.locator('#citations li[data-label="onboarding.md#1"]').count()).toBe(1);
    expect(await page.locator('#answer').getAttribute('aria-busy')).toBe('true');
    expect(await page.locator('#mode').isHidden()).toBe(true);
    chatModel.open();
    await page.locator('#mode:not([hidden])').waitFor();
    expect(await text(page, '#mode')).toBe('llm');
    // The second sentence is in no passage: its invented citation goes, the server's mark stands in its place.
    expect(await text(page, '#answer')).toBe(
      'Staff may work remotely up to three days a week [onboarding.md#1]. Ask your manager first, as <b>the</b> handbook says [not supported by the documents].',
    );
    expect(await page.locator('#answer b').count()).toBe(0);
    expect(await page.locator('#answer').getAttribute('aria-busy')).toBe('false');
    expect(await text(page, '#usage')).toBe('tokens: 321 prompt, 23 completion, 344 total');
    expect(await text(page, '#unknown')).toBe('Cited but not among the passages: nowhere.md#9');
    await screenshot(page, 'ask-llm');
  });
});
