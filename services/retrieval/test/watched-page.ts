import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** The Debian package chromium's binary: playwright-core drives it, no browser is downloaded. */
const CHROMIUM_PATH = '/usr/bin/chromium';

/** Whether Chromium is installed; when it is not, says which tests skip and how to install it. */
export function chromiumPresent(whatSkips: string): boolean {
  const present = existsSync(CHROMIUM_PATH);
  if (!present) console.warn(`${CHROMIUM_PATH} is absent (Debian package chromium: apt-get install --no-install-recommends chromium): ${whatSkips}`);
  return present;
}

/** A headless Chromium for the web-page tests: no sandbox (CI runs as root), no GPU, no background traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    timeout: 30_000,
  });
}

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
