/**
 * The real login page in a real browser (Chromium through playwright-core): labels and language,
 * a login that lands on the client's callback with a code and the state, and single sign-on for a
 * second client in the same browser without the form.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the browser test`;
const PASSWORD = 'browser password 1';

/** A tiny relying-party callback: it only has to answer so the browser can land on it. */
async function startCallback(): Promise<{ url: string; server: Server }> {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('callback reached'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, server };
}

for (const db of DATABASES) {
  describe(`login page in Chromium on ${db.name}`, { skip }, () => {
    let server: RunningServer;
    let browser: Browser;
    let callback: { url: string; server: Server };

    before(async () => {
      server = await startServer(db);
      callback = await startCallback();
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      });
    });
    after(async () => {
      await browser?.close();
      callback?.server.close();
      await server?.close();
    });

    test('log in through the form, land on the callback with a code and the state; a second client then gets a code silently', async () => {
      const { client } = await createTestClient(server.gatehouse.store, { redirectUris: [callback.url] });
      const { client: second } = await createTestClient(server.gatehouse.store, { redirectUris: [`${callback.url}?app=second`] });
      const user = await createTestUser(server.gatehouse.store, { username: `browser-${Date.now()}`, password: PASSWORD });
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().includes('status of 404')) problems.push(message.text());
      });
      page.on('response', (response) => {
        if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) problems.push(`${response.status()} ${response.url()}`);
      });
      try {
        await page.goto(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: callback.url, response_type: 'code', scope: 'openid', state: 'browser-state-1', ui_locales: 'fi' }));
        assert.equal(await page.getAttribute('html', 'lang'), 'fi');
        assert.equal(await page.getByLabel('Käyttäjätunnus').count(), 1);
        assert.equal(await page.getByLabel('Salasana').count(), 1);
        const stylesheetApplied = await page.evaluate<string>('getComputedStyle(document.querySelector("button")).backgroundColor');
        assert.equal(stylesheetApplied, 'rgb(31, 95, 158)', 'the stylesheet loads under the Content-Security-Policy');
        await page.getByLabel('Käyttäjätunnus').fill(user.username);
        await page.getByLabel('Salasana').fill(PASSWORD);
        await Promise.all([page.waitForURL(`${callback.url}?**`), page.getByRole('button').first().click()]);
        const landed = new URL(page.url());
        assert.equal(`${landed.origin}${landed.pathname}`, callback.url);
        assert.match(landed.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);
        assert.equal(landed.searchParams.get('state'), 'browser-state-1');
        assert.equal(landed.searchParams.get('iss'), server.issuer);

        const response = await page.goto(authorizationUrl(server.url, { client_id: second.clientId, redirect_uri: `${callback.url}?app=second`, response_type: 'code', scope: 'openid', state: 'browser-state-2' }));
        const silent = new URL(page.url());
        assert.equal(silent.searchParams.get('app'), 'second');
        assert.match(silent.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);
        assert.equal(silent.searchParams.get('state'), 'browser-state-2');
        const hop = response?.request().redirectedFrom();
        assert.ok(hop?.url().startsWith(`${server.url}/uas/oauth2/authorization`), 'one redirect straight from the authorization endpoint');
        assert.equal((await hop!.response())?.status(), 302);
        assert.equal(await page.locator('form').count(), 0);
        assert.deepEqual(problems, [], 'no CSP violations, failed loads or other page errors');
      } finally {
        await context.close();
      }
    });
  });
}
