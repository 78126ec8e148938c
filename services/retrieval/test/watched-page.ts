import type { Browser, Page } from 'playwright-core';

/**
 * A new page of the web-page tests, recording every Content-Security-Policy violation and uncaught
 * page error into `violations`, which each test's afterEach expects to stay empty.
 */
export async function openWatchedPage(browser: Browser, timeoutMs: number): Promise<{ page: Page; violations: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  page.setDefaultTimeout(timeoutMs);
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  page.on('pageerror', (error) => violations.push(`page error: ${error.message}`));
  return { page, violations };
}
