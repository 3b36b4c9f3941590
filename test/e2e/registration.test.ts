/**
 * Self-registration in real Chromium (issue 25 item 4; docs/registration.md): from the login
 * page's "Create an account" link to the form, the mail that arrives at a real SMTP server, its
 * link opened in the browser, the password chosen, and back through "Continue to sign in" to a
 * sign-in to the client with the new account; with approval on, the "awaiting approval" page.
 * Every page is axe-core clean (no serious or critical violation) under the strict CSP, with no
 * CSP violation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { AwaitedAudit } from '../helpers/audit.ts';
import { addClient, REDIRECT_URI } from '../helpers/back-channel.ts';
import { checkedPage } from '../helpers/checked-page.ts';
import { launchChromium, noChromium } from '../helpers/console-browser.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;
const PASSWORD = 'my very own passphrase';

describe('self-registration in Chromium', { skip: noChromium }, () => {
  let smtp: TestSmtpServer;
  let browser: Browser;
  before(async () => {
    smtp = await startSmtpServer();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await smtp?.stop();
  });

  /** A server with self-registration on, and a browser context at its login page for a client. */
  async function journey(env: Record<string, string>, run: (page: Page, server: RunningServer, audit: AwaitedAudit, clean: (what: string) => Promise<void>, authorize: string) => Promise<void>): Promise<void> {
    const audit = new AwaitedAudit();
    const server = await startServer(sqlite, { audit, env: { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example', GATEHOUSE_OUTBOX_INTERVAL: '0', GATEHOUSE_REGISTRATION: 'open', ...env } });
    smtp.received.length = 0;
    const { client } = await addClient(server.gatehouse.store);
    const authorize = `${server.url}/uas/oauth2/authorization?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 'e2e' })}`;
    const { context, page, clean } = await checkedPage(browser);
    try {
      await run(page, server, audit, clean, authorize);
    } finally {
      await context.close();
      await server.close();
    }
  }

  /** From the login page to the finished registration: the form, the mail, the link, the password. */
  async function register(page: Page, server: RunningServer, audit: AwaitedAudit, clean: (what: string) => Promise<void>, authorize: string, email: string): Promise<void> {
    await page.goto(authorize);
    await clean('the login page');
    await page.getByRole('link', { name: 'Create an account', exact: true }).click();
    await page.waitForURL(`${server.url}/uas/account/register?**`);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Create an account');
    await clean('the registration form');
    await page.getByLabel('E-mail address', { exact: true }).fill(email);
    await page.getByLabel('Given name (optional)', { exact: true }).fill('Erika');
    await page.getByRole('button', { name: 'Send the link', exact: true }).click();
    await page.getByRole('status').waitFor();
    assert.match((await page.getByRole('status').textContent()) ?? '', /^Check your mail: a message is on its way/);
    await clean('the answer');

    // The ask's work runs after the answer: wait for its audit event, then send the outbox.
    await audit.until((events) => events.some((e) => e.event === 'registration.requested'));
    assert.equal((await server.gatehouse.outbox.sender.tick()).delivered, 1);
    const raw = smtp.received[0]!.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_w, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const link = /(http:\/\/[^\s<>"]+\/account\/register\/finish\?token=[A-Za-z0-9_-]{43})/.exec(raw)?.[1];
    assert.ok(link, 'the mail carries the link');

    await page.goto(link);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Choose your password');
    await clean('the password page');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create the account', exact: true }).click();
    await page.getByRole('status').waitFor();
  }

  test('login page → "Create an account" → the mailed link → a password → back to sign in to the client; every page axe-clean', { timeout: 120_000 }, async () => {
    await journey({}, async (page, server, audit, clean, authorize) => {
      await register(page, server, audit, clean, authorize, 'erika@example.com');
      assert.match((await page.getByRole('status').textContent()) ?? '', /^Your account is ready/);
      await clean('the done page');
      await page.getByRole('link', { name: 'Continue to sign in', exact: true }).click();
      await page.getByLabel('Username', { exact: true }).fill('erika@example.com');
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${REDIRECT_URI}?**`);
      const back = new URL(page.url()).searchParams;
      assert.deepEqual([Boolean(back.get('code')), back.get('state')], [true, 'e2e'], 'signed in to the client with the new account');
    });
  });

  test('with approval on: "awaiting approval", axe-clean', { timeout: 120_000 }, async () => {
    await journey({ GATEHOUSE_REGISTRATION_APPROVAL: 'on' }, async (page, server, audit, clean, authorize) => {
      await register(page, server, audit, clean, authorize, 'waiting@example.com');
      assert.match((await page.getByRole('status').textContent()) ?? '', /^Your account has been created and is awaiting approval by an administrator\./);
      await clean('the awaiting-approval page');
      assert.equal((await server.gatehouse.store.users.getByUsername('waiting@example.com'))?.status, 'pending');
    });
  });
});
