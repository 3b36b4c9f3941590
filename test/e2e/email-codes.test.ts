/**
 * E-mail codes in real Chromium (issue 25 item 5; docs/second-factors.md, "E-mail codes"): a user
 * adds e-mail codes on the account security page (the code read from the mail that arrived at a
 * real SMTP server), then signs in to a client with the password and a code sent by e-mail; the
 * ID token says amr ["pwd", "otp", "mfa"]. Every page is axe-core clean (no serious or critical
 * violation) under the strict CSP, with no CSP violation.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addClient, basic, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { clientBrowser } from '../helpers/client-browser.ts';
import { noChromium } from '../helpers/console-browser.ts';
import { codeIn } from '../helpers/email-codes.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { mailBrowserRig } from '../helpers/mail-browser.ts';

const PASSWORD = 'a password and a mailbox';

describe('e-mail codes in Chromium', { skip: noChromium }, () => {
  const rig = mailBrowserRig();

  test('account page → "Add e-mail codes" → the mailed code → then a sign-in with password and a mailed code; amr exact; every page axe-clean', { timeout: 120_000 }, async () => {
    const { smtp, server, browser } = rig;
    const user = await createTestUser(server.gatehouse.store, { username: 'erika', password: PASSWORD, email: 'erika@example.com' });
    const { client, secret } = await addClient(server.gatehouse.store);
    const { context, page, clean } = await clientBrowser(browser);
    try {
      // Adding e-mail codes.
      await page.goto(`${server.url}/uas/account/security`);
      await page.getByLabel('Username', { exact: true }).fill(user.username);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('button', { name: 'Add e-mail codes', exact: true }).waitFor();
      await clean('the account overview');
      await page.getByRole('button', { name: 'Add e-mail codes', exact: true }).click();
      await page.getByLabel('Code from the e-mail', { exact: true }).waitFor();
      await clean('the enrolment page');
      assert.deepEqual(smtp.received.at(-1)!.to, ['erika@example.com']);
      await page.getByLabel('Code from the e-mail', { exact: true }).fill(codeIn(smtp.received.at(-1)!));
      await page.getByRole('button', { name: 'Add e-mail codes', exact: true }).click();
      await page.getByRole('status').waitFor();
      assert.equal(await page.getByRole('status').textContent(), 'E-mail codes were added. You can now get a code by e-mail when you sign in.');
      await clean('the overview with e-mail codes');

      // Signing in to a client with them, in a fresh browser context.
      const { context: signIn, page: tab, clean: cleanTab } = await clientBrowser(browser);
      try {
        await tab.goto(`${server.url}/uas/oauth2/authorization?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 'e2e' })}`);
        await tab.getByLabel('Username', { exact: true }).fill(user.username);
        await tab.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await tab.getByRole('button', { name: 'Sign in', exact: true }).click();
        await tab.getByRole('button', { name: 'Send a code by e-mail', exact: true }).waitFor();
        await cleanTab('the second factor page');
        const before = smtp.received.length;
        await tab.getByRole('button', { name: 'Send a code by e-mail', exact: true }).click();
        // A notice, announced politely (role=status), not an alert (AM107).
        await tab.getByRole('status').waitFor();
        assert.equal(await tab.getByRole('status').textContent(), 'We sent a code to e***@example.com. It works once, for 10 minutes. Check your spam folder if nothing arrives.');
        assert.deepEqual([await tab.getByRole('status').getAttribute('class'), await tab.getByRole('alert').count()], ['notice', 0]);
        assert.equal(smtp.received.length, before + 1);
        await cleanTab('the page after the send');
        await tab.getByLabel('Code from the e-mail', { exact: true }).fill(codeIn(smtp.received.at(-1)!));
        await tab.getByLabel('Code from the e-mail', { exact: true }).press('Enter');
        await tab.waitForURL(`${REDIRECT_URI}?**`);
        const code = new URL(tab.url()).searchParams.get('code')!;
        const token = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) });
        assert.equal(token.status, 200);
        const claims = JSON.parse(Buffer.from((token.body.id_token as string).split('.')[1]!, 'base64url').toString()) as { amr: string[] };
        assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
      } finally {
        await signIn.close();
      }
    } finally {
      await context.close();
    }
  });
});
