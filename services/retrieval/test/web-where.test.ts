/**
 * The web page's "where" box, in a real Chromium against the real API: file types, a folder glob and a
 * cap per source become the request's `filter` and `max_per_source` (docs/api.md, "Search controls") on
 * Search, Ask and every follow-up of the thread; a filter the API refuses shows its 400 in the page.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumPresent, launchChromium, openWatchedPage } from './watched-page.ts';
import { startTestStack, type TestStack } from './test-stack.ts';

const hasChromium = chromiumPresent(`the web page's "where" box tests are skipped`);
const WAIT_MS = 15_000;

describe.skipIf(!hasChromium)('the "where" box of the web page (real Chromium)', () => {
  let browser: Browser;
  let stack: TestStack;
  let page: Page;
  let violations: string[];
  let bodies: Array<{ path: string; body: any }>;

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
    bodies = [];
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path === '/search' || path === '/chat') bodies.push({ path, body: request.postDataJSON() });
    });
    await page.goto(`${stack.baseUrl}/`, { waitUntil: 'load' });
  });

  afterEach(async () => {
    await page?.close();
    expect(violations).toEqual([]);
  });

  async function fillWhere(fields: { types?: string; folder?: string; max?: string }): Promise<void> {
    await page.getByText('Where to look').click();
    if (fields.types !== undefined) await page.getByLabel('File types').fill(fields.types);
    if (fields.folder !== undefined) await page.getByLabel('Folder').fill(fields.folder);
    if (fields.max !== undefined) await page.getByLabel('Max per source').fill(fields.max);
  }

  it('sends nothing more when the box is left empty', async () => {
    await page.getByLabel('Question', { exact: true }).fill('how long are snapshots kept?');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('#results > li').first().waitFor();
    expect(bodies).toEqual([{ path: '/search', body: { query: 'how long are snapshots kept?' } }]);
  });

  it('searches only the folder and types given, at most N per source', async () => {
    // Without the filter, these terms find backups.md ("run stratactl"); ops/alerts.md has "re-run".
    await page.getByLabel('Question', { exact: true }).fill('snapshots run');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('#results > li').first().waitFor();
    expect(await page.locator('#results > li .source').first().textContent()).toBe('backups.md');
    await fillWhere({ types: '.MD, md', folder: 'ops/**', max: '1' });
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('#results > li .source', { hasText: 'ops/' }).first().waitFor();
    expect(bodies.at(-1)).toEqual({ path: '/search', body: { query: 'snapshots run', filter: { source: 'ops/**', type: ['md'] }, max_per_source: 1 } });
    expect(await page.locator('#results > li .source').allTextContents()).toEqual(['ops/alerts.md']);
  });

  it('keeps the controls for the question and each follow-up of the thread, and says so under the answer', async () => {
    await fillWhere({ folder: 'ops/**', max: '2' });
    await page.getByLabel('Question', { exact: true }).fill('When is the on-call engineer paged?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#follow-up-form:not([hidden])').waitFor();
    expect(await page.locator('#where-used').textContent()).toBe('where: folder ops/** · at most 2 per source');
    await page.getByLabel('Follow-up', { exact: true }).fill('And if nobody acknowledges?');
    await page.getByRole('button', { name: 'Follow up' }).click();
    await page.locator('#thread-turns .turn-question').waitFor();
    await page.locator('#follow-up-form:not([hidden])').waitFor();
    const controls = { filter: { source: 'ops/**' }, max_per_source: 2 };
    expect(bodies).toEqual([
      { path: '/chat', body: { query: 'When is the on-call engineer paged?', stream: true, ...controls } },
      { path: '/chat', body: { query: 'And if nobody acknowledges?', history: [expect.objectContaining({ question: 'When is the on-call engineer paged?' })], stream: true, ...controls } },
    ]);
    expect(await page.locator('#citations li').first().getAttribute('data-label')).toMatch(/^ops\/alerts\.md#/);
  });

  it('shows the API\'s 400 when it refuses the filter', async () => {
    // docs/api.md: a malformed filter value is 400 RAG_INVALID_FILTER, its message naming the field.
    await fillWhere({ folder: 'x'.repeat(501) });
    await page.getByLabel('Question', { exact: true }).fill('how long are snapshots kept?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#error:not([hidden])').waitFor();
    expect(await page.locator('#error .code').textContent()).toBe('RAG_INVALID_FILTER');
    expect(await page.locator('#error .message').textContent()).toContain('"filter.source"');
    expect(await page.locator('#answer-panel').isHidden()).toBe(true);
  });
});
