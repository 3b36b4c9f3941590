/**
 * The account page in real Chromium (issue 25 item 6; docs/account.md): a user signs in to an
 * application (a third-party client: its consent page), follows the application's link to the
 * account page with its client_id, sees the link back to the application, changes their password
 * without the current one (a fresh sign-in), sees the sessions of two browsers and ends the other
 * one, and withdraws the application's consent. Every section is axe-core clean (no serious or
 * critical violation) under the strict CSP with no CSP violation, in English and in Finnish.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { addClient } from '../helpers/back-channel.ts';
import { cspViolations, launchChromium, noChromium, recordCspViolations, seriousViolations } from '../helpers/console-browser.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;
const PASSWORD = 'the password I had before';
const NEW_PASSWORD = 'the password I have now';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

describe('the account page in Chromium', { skip: noChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  /** The application: it only has to answer, so the browser can land on its callback and its home. */
  let application: Server;
  let home: string;
  before(async () => {
    server = await startServer(sqlite);
    browser = await launchChromium();
    application = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('the application'));
    await new Promise<void>((resolve) => application.listen(0, '127.0.0.1', resolve));
    home = `http://127.0.0.1:${(application.address() as AddressInfo).port}/`;
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    application?.close();
  });

  const clean = async (page: Page, what: string) => {
    assert.deepEqual(await seriousViolations(page), [], `axe on ${what}`);
    assert.deepEqual(await cspViolations(page), [], `CSP on ${what}`);
  };

  test('from an application to the account page and back: password, sessions, applications; every section axe-clean in en and fi', { timeout: 180_000 }, async () => {
    const user = await createTestUser(server.gatehouse.store, { username: 'aino', password: PASSWORD, givenName: 'Aino', email: 'aino@example.com' });
    const REDIRECT_URI = `${home}callback`;
    const { client } = await addClient(server.gatehouse.store, { name: 'Timesheets', redirectUris: [REDIRECT_URI], metadata: { consent_required: true, 'client_name#fi': 'Tuntikirjaus' } });
    const account = `${server.url}/uas/account?client_id=${encodeURIComponent(client.clientId)}`;
    const authorize = `${server.url}/uas/oauth2/authorization?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid email', state: 'e2e' })}`;

    const here = await browser.newContext({ locale: 'en-GB' });
    const there = await browser.newContext({ locale: 'fi-FI', userAgent: FIREFOX });
    for (const context of [here, there]) await recordCspViolations(context);
    const page = await here.newPage();
    const other = await there.newPage();
    try {
      // Signed in to the application, its consent given.
      await page.goto(authorize);
      await page.getByLabel('Username', { exact: true }).fill(user.username);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Allow access?' }).waitFor();
      await Promise.all([page.waitForURL(`${REDIRECT_URI}?**`), page.getByRole('button', { name: 'Allow', exact: true }).click()]);

      // The application links to the account page with its client_id.
      await page.goto(account);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Your account');
      const back = page.getByRole('link', { name: 'Back to Timesheets', exact: true });
      assert.equal(await back.getAttribute('href'), home);
      await clean(page, 'the overview');

      // The password, without the current one: the sign-in was a moment ago.
      await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Password', exact: true }).click();
      await clean(page, 'the password section');
      assert.equal(await page.getByLabel('Current password', { exact: true }).count(), 0);
      await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await page.getByLabel('New password again', { exact: true }).fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Change password', exact: true }).click();
      await page.getByRole('status').waitFor();
      assert.equal(await page.getByRole('status').textContent(), 'Your password was changed. You were signed out everywhere else.');
      assert.equal(await page.getByRole('link', { name: 'Back to Timesheets', exact: true }).getAttribute('href'), home, 'the back link stays');
      await clean(page, 'the password section after the change');

      // A second browser (Finnish, Firefox) signs in on the account page itself, with the new password.
      await other.goto(account);
      await other.locator('#username').fill(user.username);
      await other.locator('#password').fill(NEW_PASSWORD);
      await other.locator('form button[type="submit"]').first().click();
      await other.getByRole('heading', { level: 1, name: 'Oma tili' }).waitFor();
      assert.equal(await other.getByRole('link', { name: 'Takaisin palveluun Tuntikirjaus', exact: true }).getAttribute('href'), home);
      await clean(other, 'the overview in Finnish');
      for (const [name, heading] of [['Salasana', 'Vaihda salasana'], ['Suojaus', 'Tilin suojaus'], ['Istunnot', 'Istuntosi'], ['Sovellukset', 'Sovellukset']] as const) {
        await other.getByRole('navigation', { name: 'Tili' }).getByRole('link', { name, exact: true }).click();
        await other.getByRole('heading', { level: 1, name: heading }).waitFor();
        await clean(other, `${name} in Finnish`);
      }

      // Two sessions, this one marked; the other (Firefox on Linux) ended.
      await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Sessions', exact: true }).click();
      const rows = page.locator('table.sessions tbody tr');
      assert.equal(await rows.count(), 2);
      assert.deepEqual(await rows.locator('th').allTextContents(), ['Firefox on Linux', 'Chrome on Linux']);
      await clean(page, 'the sessions section');
      await page.getByRole('button', { name: /^End session: Firefox on Linux/ }).click();
      await page.getByRole('status').waitFor();
      assert.equal(await rows.count(), 1);
      await clean(page, 'the sessions section after ending one');
      await other.reload();
      assert.equal(await other.locator('#password').count(), 1, 'the other browser is signed out');

      // The security section shows the same navigation.
      await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Security', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Account security' }).waitFor();
      await clean(page, 'the security section');

      // The application's consent, in words, withdrawn.
      await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Applications', exact: true }).click();
      assert.equal(await page.getByRole('heading', { level: 2 }).textContent(), 'Timesheets');
      assert.deepEqual(await page.locator('ul.scopes li').allTextContents(), ['See your email address', 'Sign you in']);
      await clean(page, 'the applications section');
      await page.getByRole('button', { name: 'Withdraw the access of Timesheets', exact: true }).click();
      await page.getByRole('status').waitFor();
      assert.equal(await page.getByText('You have not allowed any application to use your account.').count(), 1);
      assert.equal(await server.gatehouse.store.consents.find(user.id, client.clientId), undefined);
      await clean(page, 'the applications section after withdrawing');

      // And back to the application.
      await Promise.all([page.waitForURL(home), page.getByRole('link', { name: 'Back to Timesheets', exact: true }).click()]);
    } finally {
      await here.close();
      await there.close();
    }
  });
});
