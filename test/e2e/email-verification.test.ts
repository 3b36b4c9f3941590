/**
 * E-mail verification in real Chromium (issue 25 item 3; docs/email-verification.md): signed in,
 * the profile page; a name changed; a new address asked for, the page showing it pending while
 * the old one stays; the mail that arrives at a real SMTP server, its link opened in the browser
 * and confirmed; the profile page then showing the new address, verified. Every page is axe-core
 * clean (no serious or critical violation) under the strict CSP, with no CSP violation.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addClient, REDIRECT_URI } from '../helpers/back-channel.ts';
import { cspViolations, noChromium, recordCspViolations, seriousViolations } from '../helpers/console-browser.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { mailBrowserRig } from '../helpers/mail-browser.ts';

const PASSWORD = 'profile page password';

describe('e-mail verification in Chromium', { skip: noChromium }, () => {
  const rig = mailBrowserRig();

  test('signed in → the profile page → a name and a new address → the mailed link confirmed → the new address, verified; every page axe-clean', { timeout: 120_000 }, async () => {
    const { smtp, server, browser } = rig;
    const user = await createTestUser(server.gatehouse.store, { username: 'petra', password: PASSWORD, email: 'petra@old.example' });
    const { client } = await addClient(server.gatehouse.store);
    const authorize = `${server.url}/uas/oauth2/authorization?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 'e2e' })}`;
    const context = await browser.newContext();
    await recordCspViolations(context);
    await context.route(`${REDIRECT_URI}**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'client' }));
    const page = await context.newPage();
    const clean = async (what: string) => {
      assert.deepEqual(await seriousViolations(page), [], `axe on ${what}`);
      assert.deepEqual(await cspViolations(page), [], `CSP on ${what}`);
    };
    const profileUrl = `${server.url}/uas/account/profile`;
    try {
      await page.goto(authorize);
      await page.getByLabel('Username', { exact: true }).fill(user.username);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${REDIRECT_URI}?**`);

      await page.goto(profileUrl);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Your profile');
      assert.equal(await page.locator('#email-state').textContent(), 'Not verified');
      await clean('the profile page');

      await page.getByLabel('First name', { exact: true }).fill('Petra');
      await page.getByRole('button', { name: 'Save the name', exact: true }).click();
      await page.getByRole('status').waitFor();
      assert.equal(await page.getByRole('status').textContent(), 'Your name was saved.');
      assert.equal(await page.getByLabel('First name', { exact: true }).inputValue(), 'Petra');

      await page.getByLabel('New e-mail address', { exact: true }).fill('petra@new.example');
      await page.getByRole('button', { name: 'Change the address', exact: true }).click();
      await page.getByRole('status').waitFor();
      assert.equal(await page.getByRole('status').textContent(), 'A verification link is on its way to petra@new.example. It works once and for a short time.');
      assert.equal(await page.locator('#email-address').textContent(), 'petra@old.example', 'the old address stays until the link is followed');
      assert.match((await page.locator('#email-pending').textContent()) ?? '', /^Waiting for verification: petra@new\.example\./);
      await clean('the profile page with a pending change');

      assert.equal((await server.gatehouse.outbox.sender.tick()).delivered, 1);
      assert.deepEqual(smtp.received.map((m) => m.to), [['petra@new.example']]);
      const raw = smtp.received[0]!.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_w, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      const link = /(http:\/\/[^\s<>"]+\/account\/verify-email\?token=[A-Za-z0-9_-]{43})/.exec(raw)?.[1];
      assert.ok(link, 'the mail carries the link');

      await page.goto(link);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Confirm your e-mail address');
      await clean('the link page');
      await page.getByRole('button', { name: 'Confirm the address', exact: true }).click();
      await page.getByRole('status').waitFor();
      assert.equal(await page.getByRole('status').textContent(), 'Your e-mail address petra@new.example is now verified.');
      await clean('the done page');

      await page.getByRole('link', { name: 'Go to your profile', exact: true }).click();
      await page.waitForURL(profileUrl);
      assert.equal(await page.locator('#email-address').textContent(), 'petra@new.example');
      assert.equal(await page.locator('#email-state').textContent(), 'Verified');
      assert.equal(await page.locator('#email-pending').count(), 0);
      await clean('the profile page, verified');
    } finally {
      await context.close();
    }
  });
});
