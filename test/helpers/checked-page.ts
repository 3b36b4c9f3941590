/**
 * A Chromium page for the self-service pages' end-to-end tests (password reset, registration):
 * CSP violations recorded, the client's redirect_uri answered (it is not served here: its URL is
 * what counts), and `clean(what)` asserting that the page is axe-core clean (no serious or
 * critical violation) with no CSP violation so far.
 */
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { REDIRECT_URI } from './back-channel.ts';
import { cspViolations, recordCspViolations, seriousViolations } from './console-browser.ts';

export interface CheckedPage {
  context: BrowserContext;
  page: Page;
  clean(what: string): Promise<void>;
}

export async function checkedPage(browser: Browser): Promise<CheckedPage> {
  const context = await browser.newContext();
  await recordCspViolations(context);
  await context.route(`${REDIRECT_URI}**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'client' }));
  const page = await context.newPage();
  const clean = async (what: string) => {
    assert.deepEqual(await seriousViolations(page), [], `axe on ${what}`);
    assert.deepEqual(await cspViolations(page), [], `CSP on ${what}`);
  };
  return { context, page, clean };
}
