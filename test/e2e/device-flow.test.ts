/**
 * The device authorization grant end to end (RFC 8628): openid-client v6 is the device
 * (initiateDeviceAuthorization, then pollDeviceAuthorizationGrant, which keeps polling through
 * authorization_pending), and a real Chromium is the user who opens verification_uri_complete,
 * confirms the prefilled code, signs in and allows the device. Every page the user sees is
 * checked with axe-core (WCAG 2.2 AA, no serious or critical violation) under its real CSP, and
 * none may log a CSP violation (the pages have no script).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createUser } from '../../src/identity/users.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the browser test`;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const PASSWORD = 'device e2e password';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** axe-core's serious and critical violations of the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP (no script at all) does not govern.
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }>(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(TAGS)} } })`,
  );
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

for (const db of DATABASES) {
  describe(`device flow with openid-client and Chromium on ${db.name}`, { skip }, () => {
    let server: RunningServer;
    let browser: Browser;
    let username: string;
    before(async () => {
      // A 1 s interval keeps the real-time polling of openid-client short.
      server = await startServer(db, { env: { GATEHOUSE_DEVICE_CODE_INTERVAL: '1' } });
      username = `tv-viewer-${Date.now()}`;
      await createUser({ ...server.gatehouse.store, clock: systemClock, random: cryptoRandom }, { username, password: PASSWORD, givenName: 'Tea', familyName: 'Viewer' }, AS_OPERATOR);
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      });
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    test('a public TV app registered with only the device grant: the user allows it in the browser, the poll gets tokens', async () => {
      // Registered as `client create --metadata-file` would: no redirect_uris needed for the device grant alone.
      const { client } = await registerClient(
        { clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom },
        { client_name: 'Living-room TV', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], refresh_tokens: true },
      );
      const config = await oidc.discovery(new URL(server.issuer), client.clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
      assert.equal(config.serverMetadata().device_authorization_endpoint, `${server.issuer}/oauth2/device_authorization`);

      const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid profile' });
      assert.match(started.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      const polling = oidc.pollDeviceAuthorizationGrant(config, started);

      const context = await browser.newContext({ locale: 'en-GB' });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().includes('status of 4')) problems.push(message.text());
      });
      const violations: string[] = [];
      const check = async (name: string) => violations.push(...(await seriousViolations(page)).map((v) => `${name}: ${v}`));
      try {
        await page.goto(started.verification_uri_complete!);
        assert.equal(await page.getByLabel('Code').inputValue(), started.user_code);
        await check('code form');
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByLabel('Username').waitFor();
        assert.match(await page.locator('.client').innerText(), /Living-room TV/);
        await check('sign-in');
        await page.getByLabel('Username').fill(username);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.getByRole('button', { name: 'Allow' }).waitFor();
        assert.equal(await page.locator('.user-code').innerText(), started.user_code);
        assert.deepEqual(await page.locator('ul.scopes li').allInnerTexts(), ['Confirming who you are', 'Your name and username']);
        await check('confirmation');
        await page.getByRole('button', { name: 'Allow' }).click();
        await page.getByRole('heading', { name: 'Device connected' }).waitFor();
        await check('done');

        const tokens = await polling;
        const claims = tokens.claims()!;
        assert.equal(claims.iss, server.issuer);
        assert.equal(claims.aud, client.clientId);
        assert.deepEqual(claims.amr, ['pwd']);
        assert.match(claims.session_index as string, /^_[0-9a-f]{40}$/);
        assert.equal(tokens.scope, 'openid profile');
        assert.ok(tokens.refresh_token);
        const userInfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        assert.equal(userInfo.name, 'Tea Viewer');
        assert.deepEqual(violations, []);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });

    test('the user denies: pollDeviceAuthorizationGrant rejects with access_denied', async () => {
      const { client } = await registerClient({ clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom }, { client_name: 'CLI', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT] });
      const config = await oidc.discovery(new URL(server.issuer), client.clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
      const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
      const polling = oidc.pollDeviceAuthorizationGrant(config, started).then(
        () => 'tokens',
        (error: unknown) => (error as { error?: string }).error,
      );
      const context = await browser.newContext({ locale: 'fi-FI' });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      try {
        await page.goto(started.verification_uri);
        await page.getByLabel('Koodi').fill(started.user_code.toLowerCase().replace('-', ' '));
        await page.getByRole('button', { name: 'Jatka' }).click();
        await page.getByLabel('Käyttäjätunnus').fill(username);
        await page.getByLabel('Salasana').fill(PASSWORD);
        await page.getByRole('button', { name: 'Kirjaudu', exact: true }).click();
        await page.getByRole('button', { name: 'Estä' }).click();
        await page.getByRole('heading', { name: 'Pääsy estetty' }).waitFor();
        assert.equal(await polling, 'access_denied');
      } finally {
        await context.close();
      }
    });
  });
}
