/**
 * Passkeys in a real browser (issue 24, "Done when": enrol a passkey, sign in with it without a
 * username): Chromium through playwright-core with the DevTools protocol's virtual authenticator
 * (WebAuthn.addVirtualAuthenticator: CTAP2, internal, resident keys, user verification done). The
 * user adds a passkey on the account security page, then signs in to a client with it alone from
 * the login page ("Sign in with a passkey"), and the ID token's amr is exactly ["hwk","mfa"]:
 * a virtual internal authenticator's credentials are not backup-eligible (BE flag unset), so
 * device-bound (docs/decisions.md SA63). Then the passkey as the second step after the password
 * (["pwd","hwk","mfa"]). The pages with their passkey forms shown are axe-core clean, and nothing
 * breaks the strict CSP (no violation, no failed load).
 *
 * WebAuthn needs a secure context and an RP ID that is a domain, not an IP address: the issuer is
 * http://localhost:PORT/uas here (localhost is a secure context).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import type { Client } from '../../src/domain/client.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { freePort, startServer, type RunningServer } from '../helpers/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the browser test`;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const PASSWORD = 'passkeys in a browser 1';

async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }>(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(TAGS)} } })`);
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

for (const db of DATABASES) {
  describe(`passkeys in Chromium with a virtual authenticator on ${db.name}`, { skip }, () => {
    let server: RunningServer;
    let base: string;
    let browser: Browser;
    let callbackServer: Server;
    let callback: string;
    let client: Client;
    let clientSecret: string;

    before(async () => {
      const port = await freePort();
      base = `http://localhost:${port}`;
      server = await startServer(db, { env: { GATEHOUSE_PORT: String(port), GATEHOUSE_ISSUER: `${base}/uas` } });
      callbackServer = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('callback reached'));
      await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
      callback = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
      ({ client, clientSecret } = await createTestClient(server.gatehouse.store, { redirectUris: [callback] }));
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        // The server listens on 127.0.0.1 only; localhost stays the page's host (a secure context, a valid RP ID).
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--host-resolver-rules=MAP localhost 127.0.0.1'],
      });
    });
    after(async () => {
      await browser?.close();
      callbackServer?.close();
      await server?.close();
    });

    /** A page with a virtual platform authenticator (as a laptop's) and a record of CSP violations and failed loads. */
    async function open(): Promise<{ context: BrowserContext; page: Page; cdp: CDPSession; authenticatorId: string; problems: string[] }> {
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('response', (response) => {
        if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) problems.push(`${response.status()} ${response.url()}`);
      });
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
      });
      return { context, page, cdp, authenticatorId, problems };
    }

    /** The browser as one without passkey autofill: PublicKeyCredential.isConditionalMediationAvailable() says false (set through the DevTools protocol, not the page's CSP). */
    async function withoutAutofill(page: Page): Promise<void> {
      await page.addInitScript('PublicKeyCredential.isConditionalMediationAvailable = async () => false;');
    }

    /** The ID token's amr of the code the browser landed with. */
    async function amrAt(url: string): Promise<unknown> {
      const code = new URL(url).searchParams.get('code');
      assert.ok(code, `a code at ${url}`);
      const tokens = await postForm(`${base}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: callback }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      return (JSON.parse(Buffer.from(String(tokens.body.id_token).split('.')[1]!, 'base64url').toString()) as { amr?: unknown }).amr;
    }

    /** Signs in on the account page with the password and adds a passkey named `name`. */
    async function addPasskey(page: Page, username: string, name: string): Promise<void> {
      await page.goto(`${base}/uas/account/security`);
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([page.waitForURL(`${base}/uas/account/security`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      await page.getByLabel('Name of the new passkey').fill(name);
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Add a passkey' }).click()]);
      await page.getByText('The passkey was added.').waitFor();
    }

    test('enrol a passkey on the account page, then sign in with it without a username: amr ["hwk","mfa"]', async () => {
      const user = await createTestUser(server.gatehouse.store, { username: `passkey-${Date.now()}`, password: PASSWORD });
      const { context, page, cdp, authenticatorId, problems } = await open();
      try {
        await page.goto(`${base}/uas/account/security`);
        await page.getByLabel('Username').fill(user.username);
        await page.getByLabel('Password').fill(PASSWORD);
        await Promise.all([page.waitForURL(`${base}/uas/account/security`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
        // The overview with its passkey form shown (the script ran under the page's CSP).
        await page.getByRole('button', { name: 'Add a passkey' }).waitFor();
        assert.deepEqual(await seriousViolations(page), []);
        await page.getByLabel('Name of the new passkey').fill('Laptop');
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Add a passkey' }).click()]);
        await page.getByText('The passkey was added.').waitFor();
        assert.match((await page.locator('table.factors').innerText()).replace(/\s+/g, ' '), /Laptop Passkey/);
        assert.deepEqual(await seriousViolations(page), []);
        const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
        assert.deepEqual(
          credentials.map((c) => [c.isResidentCredential, c.rpId]),
          [[true, 'localhost']],
        );
        const [factor] = await server.gatehouse.store.factors.list(user.id);
        assert.deepEqual([factor?.kind, factor?.name, factor?.backupEligible], ['passkey', 'Laptop', false]);

        // Signed out (a new browser session with the same authenticator), to a client, without a
        // username: the login page's passkey autofill (conditional mediation, which Chromium's
        // virtual authenticator completes at once) signs in as soon as the page has loaded.
        await context.clearCookies();
        await page.goto(authorizationUrl(base, { client_id: client.clientId, redirect_uri: callback, response_type: 'code', scope: 'openid', state: 'passkey-1' }), { waitUntil: 'commit' });
        await page.waitForURL(`${callback}?**`);
        assert.equal(new URL(page.url()).searchParams.get('state'), 'passkey-1');
        assert.deepEqual(await amrAt(page.url()), ['hwk', 'mfa']);

        // Where the browser offers no autofill: the "Sign in with a passkey" button.
        await context.clearCookies();
        await withoutAutofill(page);
        await page.goto(authorizationUrl(base, { client_id: client.clientId, redirect_uri: callback, response_type: 'code', scope: 'openid', state: 'passkey-2' }));
        assert.equal(await page.getAttribute('#username', 'autocomplete'), 'username webauthn');
        await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
        assert.deepEqual(await seriousViolations(page), []);
        await Promise.all([page.waitForURL(`${callback}?**`), page.getByRole('button', { name: 'Sign in with a passkey' }).click()]);
        assert.equal(new URL(page.url()).searchParams.get('state'), 'passkey-2');
        assert.deepEqual(await amrAt(page.url()), ['hwk', 'mfa']);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });

    test('a password, then the passkey as the second step: amr ["pwd","hwk","mfa"]', async () => {
      const user = await createTestUser(server.gatehouse.store, { username: `second-${Date.now()}`, password: PASSWORD });
      const { context, page, problems } = await open();
      try {
        // No autofill here: the user types the password, and the passkey comes second.
        await withoutAutofill(page);
        await addPasskey(page, user.username, 'Phone');
        await context.clearCookies();
        await page.goto(authorizationUrl(base, { client_id: client.clientId, redirect_uri: callback, response_type: 'code', scope: 'openid', state: 'passkey-2' }));
        await page.getByLabel('Username').fill(user.username);
        await page.getByLabel('Password').fill(PASSWORD);
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
        await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
        assert.equal(await page.locator('input[name="code"]').count(), 0, 'no code field: the user has no code factor');
        assert.deepEqual(await seriousViolations(page), []);
        await Promise.all([page.waitForURL(`${callback}?**`), page.getByRole('button', { name: 'Use a passkey' }).click()]);
        assert.deepEqual(await amrAt(page.url()), ['pwd', 'hwk', 'mfa']);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });
  });
}
