/**
 * The consent page in a real browser (Chromium through playwright-core) with openid-client as
 * the relying party (issue 13, item 4): a third-party client's first sign-in shows the page after
 * the login form, Allow lands on the callback with a code that openid-client exchanges, and the
 * next authorization in the same browser needs neither page.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { chromium, type Browser } from 'playwright-core';
import { createUser } from '../../src/identity/users.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the browser test`;
const PASSWORD = 'consent browser password 1';

/** The relying party's callback: it only has to answer so the browser can land on it. */
async function startCallback(): Promise<{ url: string; server: Server }> {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('callback reached'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, server };
}

for (const db of DATABASES) {
  describe(`consent page in Chromium with openid-client on ${db.name}`, { skip }, () => {
    let server: RunningServer;
    let browser: Browser;
    let callback: { url: string; server: Server };
    let username: string;

    before(async () => {
      server = await startServer(db);
      callback = await startCallback();
      username = `consent-${Date.now()}`;
      await createUser({ ...server.gatehouse.store, clock: systemClock, random: cryptoRandom }, { username, password: PASSWORD, givenName: 'Alice', email: 'alice@example.com' }, AS_OPERATOR);
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

    test('login, the consent page, Allow: openid-client exchanges the code; the next sign-in asks nothing (CN-17)', async () => {
      const registered = await registerClient(
        { clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom },
        { client_name: 'Partner App', redirect_uris: [callback.url], consent_required: true },
      );
      // allowInsecureRequests: the test issuer is http on loopback; production issuers are https.
      const config = await oidc.discovery(new URL(server.issuer), registered.client.clientId, registered.clientSecret, oidc.ClientSecretBasic(registered.clientSecret!), { execute: [oidc.allowInsecureRequests] });
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().includes('status of 404')) problems.push(message.text());
      });
      const signIn = async (expectPages: boolean) => {
        const verifier = oidc.randomPKCECodeVerifier();
        const state = oidc.randomState();
        const nonce = oidc.randomNonce();
        const url = oidc.buildAuthorizationUrl(config, { redirect_uri: callback.url, scope: 'openid profile email', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce });
        if (expectPages) {
          await page.goto(url.href);
          await page.getByLabel('Username').fill(username);
          await page.getByLabel('Password').fill(PASSWORD);
          await page.getByRole('button', { name: 'Sign in', exact: true }).click();
          await page.getByRole('heading', { name: 'Allow access?' }).waitFor();
          assert.equal(await page.locator('p.client').innerText(), 'Partner App asks for access to your account.');
          assert.deepEqual(await page.locator('ul[aria-labelledby="consent-scopes"] li').allInnerTexts(), ['Sign you in', 'See your name and username', 'See your email address']);
          await Promise.all([page.waitForURL(`${callback.url}?**`), page.getByRole('button', { name: 'Allow' }).click()]);
        } else {
          await Promise.all([page.waitForURL(`${callback.url}?**`), page.goto(url.href)]);
        }
        return oidc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
      };
      try {
        const first = await signIn(true);
        assert.equal(first.scope, 'openid profile email');
        assert.equal(first.claims()!.aud, registered.client.clientId);
        const userInfo = await oidc.fetchUserInfo(config, first.access_token, first.claims()!.sub);
        assert.equal(userInfo.email, 'alice@example.com');
        const second = await signIn(false);
        assert.equal(second.claims()!.sub, first.claims()!.sub);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });
  });
}
