/**
 * A real browser for the hosted pages: Debian's chromium driven by playwright-core (`.ci/run`
 * installs chromium when it is missing). Every page a test visits is saved as a screenshot under
 * test/output/screenshots/, at desktop width and at a phone's 390 px, to be looked at.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = path.join(__dirname, '..', 'output', 'screenshots');

export const PHONE = { width: 390, height: 844 };

/** A browser for the test file, launched before its tests and closed after them. */
export function useBrowser(): { browser: Browser } {
  const ctx = {} as { browser: Browser };
  beforeAll(async () => {
    ctx.browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(() => ctx.browser?.close());
  return ctx;
}

/** Saves the whole page as test/output/screenshots/<driver>-<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${process.env.TEST_DB ?? 'sqlite'}-${name}.png`), fullPage: true });
}

/** Opens `url` at a phone's width, saves its screenshot as `<name>-phone`, and closes it. */
export async function screenshotOnPhone(browser: Browser, url: string, name: string): Promise<void> {
  const phone = await browser.newPage({ viewport: PHONE });
  try {
    await phone.goto(url);
    await screenshot(phone, `${name}-phone`);
  } finally {
    await phone.close();
  }
}
