/**
 * Passages on the web page, in a real Chromium against the real API (extractive answers, no model): a
 * passage is rendered as answers are (Markdown, sanitised), the sentence an answer cites it for is
 * marked, and citations and results open their document (GET /documents/<source>), with or without a key.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { FolderDocuments, type DocumentOrigin } from '@rag/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { chromiumPresent, launchChromium, openWatchedPage } from './watched-page.ts';
import { handbookFolder, startTestStack, type TestStack } from './test-stack.ts';

const hasChromium = chromiumPresent("the web page's passage tests are skipped");
const WAIT_MS = 15_000;
const KEY = 'sk-web-passages-7c2d';

describe.skipIf(!hasChromium)('passages and documents on the web page (real Chromium)', () => {
  let browser: Browser;
  let open: TestStack;
  let keyed: TestStack;
  let bucketKeyed: TestStack;
  let bucket: Server;
  let bucketUrl: string;
  let page: Page;
  let violations: string[];

  beforeAll(async () => {
    const documents = new FolderDocuments(handbookFolder);
    // A bucket on another origin serving the handbook's files, as GCS serves an object at its signed URL.
    bucket = createServer((request, response) => {
      const object = decodeURIComponent(new URL(request.url!, 'http://bucket').pathname.replace(/^\/handbook\//, ''));
      readFile(join(handbookFolder, object)).then(
        (bytes) => response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(bytes),
        () => response.writeHead(404).end(),
      );
    });
    await new Promise<void>((listening) => bucket.listen(0, '127.0.0.1', listening));
    bucketUrl = `http://127.0.0.1:${(bucket.address() as AddressInfo).port}`;
    const signedOrigin: DocumentOrigin = { locate: async (source) => ({ kind: 'redirect', url: `${bucketUrl}/handbook/${encodeURIComponent(source)}?X-Goog-Signature=00ff`, expiresAt: new Date(Date.now() + 300_000) }) };
    const apiKeys = parseApiKeys(`keys:\n  - {name: web, sha256: ${hashApiKey(KEY)}, groups: []}\n`, 'keys.yaml');
    [open, keyed, bucketKeyed] = await Promise.all([startTestStack({ documents }), startTestStack({ documents, apiKeys }), startTestStack({ documents: signedOrigin, apiKeys })]);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([open?.close(), keyed?.close(), bucketKeyed?.close()]);
    await new Promise((closed) => bucket?.close(closed));
  });

  beforeEach(async () => {
    ({ page, violations } = await openWatchedPage(browser, WAIT_MS));
  });

  afterEach(async () => {
    await page?.close();
    expect(violations).toEqual([]);
  });

  async function ask(stack: TestStack, question: string): Promise<void> {
    await page.goto(`${stack.baseUrl}/`, { waitUntil: 'load' });
    await page.getByLabel('Question', { exact: true }).fill(question);
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#mode:not([hidden])').waitFor();
  }

  it('renders a cited passage as Markdown and marks the sentence the answer quotes, not its neighbour', async () => {
    await ask(open, 'How often are database snapshots taken?');
    const answer = (await page.locator('#answer').textContent()) ?? '';
    // The extractive answer quotes the passage's first sentence; the second ("two approvals") is not quoted.
    expect(answer).toContain('To restore a snapshot, run');
    expect(answer).not.toContain('two approvals');
    await page.locator('#answer a.cite[data-label="backups.md#1"]').first().click();
    await page.locator('#passage-panel:not([hidden])').waitFor();
    // Markdown, not its source: inline code and the fenced block are elements, no backtick is left.
    expect(await page.locator('#passage-text p code').first().textContent()).toBe('stratactl restore --snapshot <id> --target staging');
    expect(await page.locator('#passage-text pre code').textContent()).toContain('stratactl snapshots --since 7d');
    expect(await page.locator('#passage-text').textContent()).not.toContain('`');
    // The quoted sentence is marked across its code span; the sentence after it is not.
    const marked = (await page.locator('#passage-text mark.cited').allTextContents()).join('');
    expect(marked).toBe('To restore a snapshot, run stratactl restore --snapshot <id> --target staging and check the row counts before promoting it.');
    expect(marked).not.toContain('approvals');
  });

  it('renders Search results as Markdown too, with the query\'s terms marked', async () => {
    await page.goto(`${open.baseUrl}/`, { waitUntil: 'load' });
    await page.getByLabel('Question', { exact: true }).fill('restore snapshot');
    await page.getByRole('button', { name: 'Search' }).click();
    const first = page.locator('#results > li').first();
    await first.waitFor();
    await first.locator('summary').click();
    expect(await first.locator('.text pre code').count()).toBe(1);
    expect((await first.locator('.text mark').allTextContents()).map((term) => term.toLowerCase())).toContain('restore');
  });

  it('links each citation to its document, which opens in a new tab without a key', async () => {
    await ask(open, 'How do I restore a snapshot?');
    const link = page.locator('#citations li[data-label="backups.md#1"] a.document');
    expect(await link.getAttribute('href')).toBe('/documents/backups.md');
    const [tab] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    await tab.waitForLoadState();
    expect(tab.url()).toBe(`${open.baseUrl}/documents/backups.md`);
    expect(await tab.locator('body').textContent()).toBe(await readFile(join(handbookFolder, 'backups.md'), 'utf8'));
    await tab.close();
  });

  it('opens a document with the stored key: fetched with the Authorization header, shown from a blob: URL', async () => {
    await page.goto(`${keyed.baseUrl}/`, { waitUntil: 'load' });
    await page.evaluate(`sessionStorage.setItem('rag-api-key', ${JSON.stringify(KEY)})`);
    const sent: Array<string | undefined> = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/documents/')) sent.push(request.headers()['authorization']);
    });
    await page.getByLabel('Question', { exact: true }).fill('How do I restore a snapshot?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#mode:not([hidden])').waitFor();
    const link = page.locator('#citations li[data-label="backups.md#1"] a.document');
    const [tab] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    await tab.waitForURL(/^blob:/);
    expect(sent).toEqual([`Bearer ${KEY}`]);
    // Shown as plain text: a blob: document would not keep the route's sandboxing policy.
    expect(await tab.locator('body').textContent()).toBe(await readFile(join(handbookFolder, 'backups.md'), 'utf8'));
    await tab.close();
    // A refused key: no tab stays open, the page asks for a key.
    await page.evaluate("sessionStorage.setItem('rag-api-key', 'sk-revoked')");
    await link.click();
    await page.locator('#key-form:not([hidden])').waitFor();
    expect(await page.locator('#error .code').textContent()).toBe('RAG_UNAUTHENTICATED');
    expect(page.context().pages()).toHaveLength(1);
  });

  it('opens a gs:// document with the stored key at its signed URL: the API gives the URL as JSON, the tab goes there', async () => {
    await page.goto(`${bucketKeyed.baseUrl}/`, { waitUntil: 'load' });
    await page.evaluate(`sessionStorage.setItem('rag-api-key', ${JSON.stringify(KEY)})`);
    await page.getByLabel('Question', { exact: true }).fill('How do I restore a snapshot?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#mode:not([hidden])').waitFor();
    const link = page.locator('#citations li[data-label="backups.md#1"] a.document');
    const [tab] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    await tab.waitForURL(`${bucketUrl}/handbook/backups.md?X-Goog-Signature=00ff`);
    expect(await tab.locator('body').textContent()).toBe(await readFile(join(handbookFolder, 'backups.md'), 'utf8'));
    await tab.close();
    expect(await page.locator('#error').isVisible()).toBe(false);
  });
});
