/**
 * An invitation in real Chromium (issue 25 item 4; docs/invitations.md): an administrator invites
 * through the management API, the mail arrives at a real SMTP server, its link opened in the
 * browser shows the username, a refused password keeps the form, a good one makes the account and
 * lands signed in on the account page; the link then no longer works. Every page is axe-core
 * clean (no serious or critical violation) under the strict CSP, with no CSP violation.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cspViolations, noChromium, recordCspViolations, seriousViolations } from '../helpers/console-browser.ts';
import { manageCall, manageTokens } from '../helpers/manage.ts';
import { mailBrowserRig } from '../helpers/mail-browser.ts';

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
