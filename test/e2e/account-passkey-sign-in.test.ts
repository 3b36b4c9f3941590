/**
 * The account page's "Sign in with a passkey" in real Chromium (docs/account.md; decisions
 * AM108–AM113), with a virtual authenticator over CDP on an issuer at localhost (WebAuthn needs a
 * domain as RP ID): a user who has only a passkey (an invitation accepted with one, AM100) opens a
 * section of the account page in a new session, follows the sign-in form's link to the passkey
 * page, signs in with the passkey and lands on that section; later, signed in too long ago for a
 * change, confirms it is them with the passkey on the security page. The section's sign-in page has no
 * script in its CSP; the passkey page allows only its own scripts ('self'). Every page is axe-core
 * clean (no serious or critical violation) with no CSP violation, no console error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ManualClock } from '../../src/lib/clock.ts';
import { cspViolations, noChromium, recordCspViolations, seriousViolations } from '../helpers/console-browser.ts';
import { DATABASES } from '../helpers/databases.ts';
import { pendingInvitation } from '../helpers/invitations.ts';
import { freePort, startServer, type RunningServer } from '../helpers/server.ts';
import { launchForLocalhost, openWithAuthenticator } from '../helpers/webauthn-browser.ts';

describe('the account page signed in by a passkey in Chromium, a virtual authenticator', { skip: noChromium }, () => {
  const clock = new ManualClock(Date.now());
  let server: RunningServer;
  let base: string;
  let browser: Browser;
  before(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;
    server = await startServer(sqlite, { clock, env: { GATEHOUSE_PORT: String(port), GATEHOUSE_ISSUER: `${base}/uas` } });
    browser = await launchForLocalhost();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('a passkey-only user: a section → "Sign in with a passkey" → back on the section; every page axe-clean, CSP as asserted', { timeout: 120_000 }, async () => {
    // The account, made by an invitation accepted with a passkey (the invitation as the administrators' acts write it).
    const { token } = await pendingInvitation(server.gatehouse.store, 'paula@example.com', clock.now());
    const { context, page, problems } = await openWithAuthenticator(browser);
    await recordCspViolations(context);
    const clean = async (what: string) => {
      assert.deepEqual(await seriousViolations(page), [], `axe on ${what}`);
      assert.deepEqual(await cspViolations(page), [], `CSP on ${what}`);
    };
    try {
      await page.goto(`${base}/uas/account/invitation?token=${token}`);
      await Promise.all([page.waitForURL(`${base}/uas/account/security?ui_locales=en`), page.getByRole('button', { name: 'Use a passkey', exact: true }).click()]);
      assert.equal((await server.gatehouse.store.users.getCredentials('paula@example.com'))?.passwordHash, undefined, 'no password');
      // A new session: the browser forgets its cookies, the authenticator keeps the passkey.
      await context.clearCookies();

      const section = await page.goto(`${base}/uas/account/sessions`);
      const sectionCsp = (await section?.allHeaders())?.['content-security-policy'] ?? '';
      assert.match(sectionCsp, /default-src 'none'/);
      assert.doesNotMatch(sectionCsp, /script-src/);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Your account');
      const link = page.getByRole('link', { name: 'Sign in with a passkey', exact: true });
      assert.equal(await link.getAttribute('href'), '/uas/account/security/passkey-sign-in?section=sessions');
      await clean('the sign-in form with its passkey link');

      const [opened] = await Promise.all([page.waitForResponse((r) => r.url() === `${base}/uas/account/security/passkey-sign-in?section=sessions`), link.click()]);
      const csp = (await opened.allHeaders())['content-security-policy'] ?? '';
      assert.deepEqual([/script-src [^;]*/.exec(csp)?.[0], /connect-src [^;]*/.exec(csp)?.[0]], ["script-src 'self'", "connect-src 'self'"]);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Sign in with a passkey');
      // The form is shown by the page's script (served from our origin under its CSP).
      const button = page.getByRole('button', { name: 'Sign in with a passkey', exact: true });
      await button.waitFor();
      await clean('the passkey sign-in page');

      await Promise.all([page.waitForURL(`${base}/uas/account/sessions`), button.click()]);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Your sessions');
      await clean('the section, signed in by the passkey');
      await page.goto(`${base}/uas/account/security`);
      assert.match((await page.locator('main').textContent()) ?? '', /Signed in as\s*paula@example\.com/);
      await page.getByRole('button', { name: 'Add an authenticator app' }).waitFor();

      // Signed in too long ago for a change (GATEHOUSE_ACCOUNT_REAUTH_WINDOW, 300 s): "Confirm with a passkey", back here, recent again.
      clock.advance(301_000);
      await page.goto(`${base}/uas/account/security`);
      assert.equal(await page.getByRole('button', { name: 'Add an authenticator app' }).count(), 0);
      await clean('the security page asking to confirm');
      await page.getByRole('link', { name: 'Confirm with a passkey', exact: true }).click();
      await button.waitFor();
      await clean('the passkey page confirming');
      await Promise.all([page.waitForURL(`${base}/uas/account/security`), button.click()]);
      await page.getByRole('button', { name: 'Add an authenticator app' }).waitFor();
      await clean('the security page, confirmed by the passkey');
      assert.deepEqual(problems, [], 'no console error, no failed load');
    } finally {
      await context.close();
    }
  });
});
