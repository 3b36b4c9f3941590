/**
 * An invitation in real Chromium (issue 25 item 4; docs/invitations.md): an administrator invites
 * through the management API, the mail arrives at a real SMTP server, its link opened in the
 * browser shows the username, a refused password keeps the form, a good one makes the account and
 * lands signed in on the account page; the link then no longer works. And the passkey instead of
 * a password (AM100), with a virtual authenticator over CDP on an issuer at localhost (WebAuthn
 * needs a domain as RP ID): the account is made with the passkey (no password) and signed in (the
 * passkey alone signing in later is test/http/invitation-passkeys.test.ts's). Every page is axe-core clean (no serious or critical violation) under the strict
 * CSP, with no CSP violation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { cspViolations, noChromium, recordCspViolations, seriousViolations } from '../helpers/console-browser.ts';
import { DATABASES } from '../helpers/databases.ts';
import { manageCall, manageTokens } from '../helpers/manage.ts';
import { mailBrowserRig } from '../helpers/mail-browser.ts';
import { freePort, startServer, type RunningServer } from '../helpers/server.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import { launchForLocalhost, openWithAuthenticator } from '../helpers/webauthn-browser.ts';

const PASSWORD = 'lanterns over the harbour';

describe('invitation in Chromium', { skip: noChromium }, () => {
  const rig = mailBrowserRig();

  test('the mailed link → choose a password → signed in on the account page; every page axe-clean', { timeout: 120_000 }, async () => {
    const { smtp, server, browser } = rig;
    const tokens = await manageTokens(server);
    const invited = await manageCall(server, 'POST', '/invitations', { token: tokens.admin, body: { email: 'aino@example.com', given_name: 'Aino' } });
    assert.equal(invited.status, 201, invited.text);
    assert.equal((await server.gatehouse.outbox.sender.tick()).delivered, 1);
    const raw = smtp.received[0]!.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_w, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const link = /(http:\/\/[^\s<>"]+\/account\/invitation\?token=[A-Za-z0-9_-]{43})/.exec(raw)?.[1];
    assert.ok(link, 'the mail carries the link');

    const context = await browser.newContext();
    await recordCspViolations(context);
    const page = await context.newPage();
    const clean = async (what: string) => {
      assert.deepEqual(await seriousViolations(page), [], `axe on ${what}`);
      assert.deepEqual(await cspViolations(page), [], `CSP on ${what}`);
    };
    try {
      await page.goto(link);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Create your account');
      assert.match((await page.locator('.card > p').first().textContent()) ?? '', /^You were invited to make an account\. Your username is aino@example\.com\./);
      await clean('the invitation page');

      // A password the policy refuses: the form again, the rule named, the link still usable.
      await page.getByLabel('Password', { exact: true }).fill('aino@example.com');
      await page.getByLabel('Password again', { exact: true }).fill('aino@example.com');
      await page.getByRole('button', { name: 'Create the account', exact: true }).click();
      await page.getByRole('alert').waitFor();
      assert.equal(await page.getByRole('alert').textContent(), 'The password must not be your username or e-mail address.');
      await clean('the refusal');

      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByLabel('Password again', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Create the account', exact: true }).click();
      await page.waitForURL(`${server.url}/uas/account/security?ui_locales=en`);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Account security');
      assert.match((await page.locator('main').textContent()) ?? '', /Signed in as\s*aino@example\.com/);
      await clean('the account page, signed in');

      await page.goto(link);
      assert.match((await page.getByRole('alert').textContent()) ?? '', /^This invitation can no longer be used/);
      await clean('the spent link');
    } finally {
      await context.close();
    }
  });
});

describe('invitation accepted with a passkey in Chromium, a virtual authenticator', { skip: noChromium }, () => {
  let smtp: TestSmtpServer;
  let server: RunningServer;
  let base: string;
  let browser: Browser;
  before(async () => {
    smtp = await startSmtpServer();
    const port = await freePort();
    base = `http://localhost:${port}`;
    const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;
    server = await startServer(sqlite, {
      env: { GATEHOUSE_PORT: String(port), GATEHOUSE_ISSUER: `${base}/uas`, GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example', GATEHOUSE_OUTBOX_INTERVAL: '0' },
    });
    browser = await launchForLocalhost();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.stop();
  });

  test('the mailed link → "Use a passkey" → signed in on the account page, no password; every page axe-clean', { timeout: 120_000 }, async () => {
    const tokens = await manageTokens(server);
    const invited = await manageCall(server, 'POST', '/invitations', { token: tokens.admin, body: { email: 'pekka@example.com', given_name: 'Pekka' } });
    assert.equal(invited.status, 201, invited.text);
    assert.equal((await server.gatehouse.outbox.sender.tick()).delivered, 1);
    const raw = smtp.received[0]!.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_w, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const link = /(http:\/\/localhost:[0-9]+\/uas\/account\/invitation\?token=[A-Za-z0-9_-]{43})/.exec(raw)?.[1];
    assert.ok(link, 'the mail carries the link');

    const { context, page, cdp, authenticatorId, problems } = await openWithAuthenticator(browser);
    await recordCspViolations(context);
    const clean = async (what: string) => {
      assert.deepEqual(await seriousViolations(page), [], `axe on ${what}`);
      assert.deepEqual(await cspViolations(page), [], `CSP on ${what}`);
    };
    try {
      await page.goto(link);
      // The passkey form is shown by the page's script (served from our origin under the strict CSP).
      await page.getByRole('button', { name: 'Use a passkey', exact: true }).waitFor();
      assert.equal(await page.locator('form.passkey .separator').textContent(), 'Or, instead of a password, use a passkey: your device’s screen lock, your phone or a security key signs you in.');
      await clean('the invitation page with its passkey choice');

      await Promise.all([page.waitForURL(`${base}/uas/account/security?ui_locales=en`), page.getByRole('button', { name: 'Use a passkey', exact: true }).click()]);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Account security');
      assert.match((await page.locator('main').textContent()) ?? '', /Signed in as\s*pekka@example\.com/);
      await clean('the account page, signed in by the passkey');

      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      const user = await server.gatehouse.store.users.getByUsername('pekka@example.com');
      assert.ok(user);
      assert.deepEqual(
        credentials.map((c) => [c.isResidentCredential, c.rpId]),
        [[true, 'localhost']],
        'one discoverable credential, for localhost',
      );
      const handle = Buffer.from(credentials[0]!.userHandle ?? '', 'base64').toString('base64url');
      assert.equal(await server.gatehouse.store.factors.userOfHandle(handle), user.id, 'its user handle names the account');
      assert.deepEqual([user.emailVerified, (await server.gatehouse.store.users.getCredentials('pekka@example.com'))?.passwordHash], [true, undefined]);

      assert.deepEqual(problems, [], 'no console error, no failed load until here');
      await page.goto(link);
      assert.match((await page.getByRole('alert').textContent()) ?? '', /^This invitation can no longer be used/);
      await clean('the spent link');
    } finally {
      await context.close();
    }
  });
});
