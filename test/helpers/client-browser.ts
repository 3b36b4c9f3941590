/**
 * A Chromium context for the login pages' e2e tests: CSP violations recorded, the test client's
 * redirect_uri answered by the browser itself (not served here: its URL is what counts), and a
 * check of the page with axe-core (no serious or critical violation) and for CSP violations.
 */
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { REDIRECT_URI } from './back-channel.ts';
import { cspViolations, recordCspViolations, seriousViolations } from './console-browser.ts';

export async function clientBrowser(browser: Browser) {
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
