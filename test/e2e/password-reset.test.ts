/**
 * Password reset in real Chromium (issue 25 item 2; docs/password-reset.md): from the login page's
 * "Forgot your password?" link to the page that asks for the account, the mail that arrives at a
 * real SMTP server, its link opened in the browser, the new password set, and a sign-in with it.
 * Every page is axe-core clean (no serious or critical violation) under the strict CSP, with no
 * CSP violation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { AwaitedAudit } from '../helpers/audit.ts';
import { addClient, REDIRECT_URI } from '../helpers/back-channel.ts';
import { checkedPage } from '../helpers/checked-page.ts';
import { launchChromium, noChromium } from '../helpers/console-browser.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;
const PASSWORD = 'the old forgotten one';
const NEW_PASSWORD = 'remembered this time';

describe('password reset in Chromium', { skip: noChromium }, () => {
  let smtp: TestSmtpServer;
  let server: RunningServer;
  let browser: Browser;
  const audit = new AwaitedAudit();
  before(async () => {
    smtp = await startSmtpServer();
    server = await startServer(sqlite, { audit, env: { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example', GATEHOUSE_OUTBOX_INTERVAL: '0' } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.stop();
  });

  test('login page → "Forgot your password?" → the mailed link → a new password → signed in with it; every page axe-clean', { timeout: 120_000 }, async () => {
    const user = await createTestUser(server.gatehouse.store, { username: 'paula', password: PASSWORD, email: 'paula@example.com' });
    const { client } = await addClient(server.gatehouse.store);
    const authorize = `${server.url}/uas/oauth2/authorization?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 'e2e' })}`;
    const { context, page, clean } = await checkedPage(browser);
    try {
      await page.goto(authorize);
      await clean('the login page');
      await page.getByRole('link', { name: 'Forgot your password?', exact: true }).click();
      await page.waitForURL(`${server.url}/uas/account/forgot-password?ui_locales=en`);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Reset your password');
      await clean('the forgot-password page');
      await page.getByLabel('Username or e-mail address', { exact: true }).fill(user.username);
      await page.getByRole('button', { name: 'Send the link', exact: true }).click();
      await page.getByRole('status').waitFor();
      assert.match((await page.getByRole('status').textContent()) ?? '', /^If an account exists for what you entered, a message with a link is on its way/);
      await clean('the answer');

      // The ask's work runs after the answer: wait for its audit event, then send the outbox.
      await audit.until((events) => events.some((e) => e.event === 'password_reset.sent'));
      assert.equal((await server.gatehouse.outbox.sender.tick()).delivered, 1);
      const raw = smtp.received[0]!.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_w, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      const link = /(http:\/\/[^\s<>"]+\/account\/reset\?token=[A-Za-z0-9_-]{43})/.exec(raw)?.[1];
      assert.ok(link, 'the mail carries the link');

      await page.goto(link);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Choose a new password');
      await clean('the reset page');
      await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await page.getByLabel('New password again', { exact: true }).fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Set the new password', exact: true }).click();
      await page.getByRole('status').waitFor();
      assert.match((await page.getByRole('status').textContent()) ?? '', /^Your password has been changed/);
      await clean('the done page');

      await page.goto(authorize);
      await page.getByLabel('Username', { exact: true }).fill(user.username);
      await page.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${REDIRECT_URI}?**`);
      assert.ok(new URL(page.url()).searchParams.get('code'), 'signed in with the new password');
    } finally {
      await context.close();
    }
  });
});
