/**
 * Page citations on the web page, in a real Chromium against the real API over a real PDF (the field
 * manual fixture, converted by the embedded PDF converter): a thread whose citations show "p. N" and link
 * to the document at that page (#page=N, RFC 8118 §3), with the cited sentence marked in the passage.
 * Screenshots go to test-output/web/; RAG_UPDATE_SCREENSHOTS=1 also writes them to docs/screenshots/.
 */
import { copyFile, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FolderDocuments } from '@rag/core';
import { PdfConverter } from '@rag/core/ingestion';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey, parseApiKeys } from '../src/auth/api-keys.ts';
import { FIELD_MANUAL_PAGES } from '../../../packages/core/test/fixtures/pages/make-field-manual.ts';
import { chromiumPresent, launchChromium, openWatchedPage } from './watched-page.ts';
import { handbookFolder, postJson, startTestStack, type TestStack } from './test-stack.ts';

const hasChromium = chromiumPresent("the web page's page-citation tests are skipped");
const WAIT_MS = 15_000;
const KEY = 'sk-web-pages-41b9';
const fieldManual = fileURLToPath(new URL('../../../packages/core/test/fixtures/pages/field-manual.pdf', import.meta.url));
const MANUAL = 'manuals/field-manual.pdf';
const outputFolders = [fileURLToPath(new URL('../../../test-output/web/', import.meta.url))];
if (process.env['RAG_UPDATE_SCREENSHOTS'] === '1') outputFolders.push(fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url)));

const QUESTION = 'How often do the heron pump bearings need grease?';
const FOLLOW_UP = 'And what if the housing gets too hot?';

/** The 1-based page of the field manual that holds `sentence`, from the text the PDF was made of. */
function pageHolding(sentence: string): number {
  const words = sentence.replace(/\s+/g, ' ').trim();
  const index = FIELD_MANUAL_PAGES.findIndex((page) => page.includes(words));
  expect(index, `"${sentence}" is on no page of the field manual`).toBeGreaterThanOrEqual(0);
  return index + 1;
}

describe.skipIf(!hasChromium)('page citations on the web page (real Chromium, a real PDF)', () => {
  let browser: Browser;
  let root: string;
  let open: TestStack;
  let keyed: TestStack;
  let page: Page;
  let violations: string[];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rag-web-pages-'));
    await cp(handbookFolder, root, { recursive: true });
    await mkdir(join(root, 'manuals'));
    await copyFile(fieldManual, join(root, MANUAL));
    const options = { folder: root, converters: [new PdfConverter()], documents: new FolderDocuments(root) };
    [open, keyed] = await Promise.all([
      startTestStack(options),
      startTestStack({ ...options, apiKeys: parseApiKeys(`keys:\n  - {name: web, sha256: ${hashApiKey(KEY)}, groups: []}\n`, 'keys.yaml') }),
    ]);
    browser = await launchChromium();
    for (const folder of outputFolders) await mkdir(folder, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([open?.close(), keyed?.close()]);
    if (root) await rm(root, { recursive: true, force: true });
  });

  beforeEach(async () => {
    ({ page, violations } = await openWatchedPage(browser, WAIT_MS));
  });

  afterEach(async () => {
    await page?.close();
    expect(violations).toEqual([]);
  });

  async function screenshot(name: string): Promise<void> {
    const image = await page.screenshot({ fullPage: true });
    for (const folder of outputFolders) await writeFile(join(folder, `${name}.png`), image);
  }

  /** The page label of a citation as the API gives it: "p. N" or "pp. N–M". */
  function expectedLabel(citation: { page: number; pages?: number[] }): string {
    const pages = citation.pages && citation.pages.length > 1 ? citation.pages : [citation.page];
    return pages.length > 1 ? `pp. ${pages[0]}–${pages.at(-1)}` : `p. ${pages[0]}`;
  }

  it('shows "p. N" beside each citation of the PDF, links it to that page, and marks the cited sentence', async () => {
    await page.goto(`${open.baseUrl}/`, { waitUntil: 'load' });
    await page.getByLabel('Question', { exact: true }).fill(QUESTION);
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('#follow-up-form:not([hidden])').waitFor();
    await page.getByLabel('Follow-up', { exact: true }).fill(FOLLOW_UP);
    await page.getByRole('button', { name: 'Follow up' }).click();
    await page.locator('#thread-turns .turn-question').waitFor();
    await page.locator('#follow-up-form:not([hidden])').waitFor();

    // The API's citations for the same follow-up: the page shows their pages.
    const chat = await postJson(open.baseUrl, '/chat', { query: FOLLOW_UP, history: [{ question: QUESTION, answer: await page.locator('#thread-turns .turn-answer').textContent() }] });
    const cited = chat.body.citations.filter((citation: { source: string }) => citation.source === MANUAL);
    expect(cited.length).toBeGreaterThan(0);
    for (const citation of cited) {
      expect(citation.page).toEqual(expect.any(Number));
      const link = page.locator(`#citations li[data-label="${MANUAL}#${citation.chunk_index}"] a.document`);
      expect(await link.textContent()).toBe(expectedLabel(citation));
      expect(await link.getAttribute('href')).toBe(`/documents/${encodeURIComponent(MANUAL)}#page=${citation.page}`);
    }

    // The cited passage, opened from the answer: the quoted sentence is marked, and it is on the cited pages.
    const first = cited[0];
    await page.locator(`#answer a.cite[data-label="${MANUAL}#${first.chunk_index}"]`).first().click();
    await page.locator('#passage-panel:not([hidden])').waitFor();
    const marked = await page.locator('#passage-text mark.cited').allTextContents();
    expect(marked.length).toBeGreaterThan(0);
    // Page ends come out of the PDF as line breaks: the sentence after one (the next page's title) is not
    // part of the quoted sentence before it, and is not marked with it.
    expect(marked.join(' ')).not.toMatch(/osprey/i);
    const markedPage = pageHolding(marked[0]!);
    expect(first.pages ?? [first.page]).toContain(markedPage);
    expect(await page.locator('#passage-document a.document').textContent()).toBe(`open ${expectedLabel(first)}`);
    await screenshot('web-thread-pages');

    // The page link opens the PDF itself, at that page.
    const [tab] = await Promise.all([page.context().waitForEvent('page'), page.locator('#passage-document a.document').click()]);
    await tab.waitForURL(/#page=\d+$/);
    expect(tab.url()).toBe(`${open.baseUrl}/documents/${encodeURIComponent(MANUAL)}#page=${first.page}`);
    // rel="noopener noreferrer": the document's tab has no handle on the page (reverse tabnabbing).
    expect(await tab.evaluate('window.opener === null')).toBe(true);
    await tab.close();
  });

  it('shows the page in Search results (types from the where box) and, with a key, opens the PDF from a blob: URL at that page', async () => {
    await page.goto(`${keyed.baseUrl}/`, { waitUntil: 'load' });
    await page.evaluate(`sessionStorage.setItem('rag-api-key', ${JSON.stringify(KEY)})`);
    const sent: Array<string | undefined> = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/documents/')) sent.push(request.headers()['authorization']);
    });
    await page.getByText('Where to look').click();
    await page.getByLabel('File types').fill('pdf, md');
    await page.getByLabel('Question', { exact: true }).fill('plover alarm code P-23');
    await page.getByRole('button', { name: 'Search' }).click();
    const result = page.locator('#results > li', { has: page.locator('.source', { hasText: MANUAL }) }).first();
    await result.waitFor();
    const link = result.locator('a.document');
    expect(await link.textContent()).toMatch(/^pp?\. \d+(–\d+)?$/);
    await result.locator('summary').click();
    await screenshot('web-search-pages');
    const start = /#page=(\d+)$/.exec((await link.getAttribute('href')) ?? '')?.[1];
    expect(Number(start)).toBeGreaterThan(0);
    const [tab] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    await tab.waitForURL(/^blob:/);
    expect(tab.url()).toMatch(new RegExp(`#page=${start}$`));
    expect(sent).toEqual([`Bearer ${KEY}`]);
    // The tab opened with window.open was cut from the page (opener = null) before it was navigated.
    expect(await tab.evaluate('window.opener === null')).toBe(true);
    await tab.close();
  });
});
