/**
 * Step-up from a password session to `phr` in a real browser (issue 24, "Done when": Chromium
 * end-to-end tests with the CDP virtual authenticator, "step up from a password session to
 * `phr`"). A user with a password, a passkey (added on the account page with the virtual
 * authenticator) and an authenticator app signs in at the multi level with the password and the
 * app's code (computed at the server's injected clock). A request for `phr` (acr_values, then the
 * claims parameter's essential acr) then shows only "Use a passkey": no password, no code field.
 * The virtual authenticator answers; the ID token's amr is exactly ["pwd","otp","mfa","hwk"]
 * (what the session proved, then what the passkey added: a virtual internal authenticator's
 * credential is device-bound), acr `phr`, and auth_time the step-up's. A silent request at `phr`
 * then answers with a code, no page. The step-up page is axe-clean and nothing breaks the CSP.
 *
 * WebAuthn needs a secure context and an RP ID that is a domain: the issuer is http://localhost:PORT/uas.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Client } from '../../src/domain/client.ts';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { noChromium as skip, seriousViolations } from '../helpers/console-browser.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, totpAt } from '../helpers/factors.ts';
import { authorizationUrl, createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { freePort, startServer, type RunningServer } from '../helpers/server.ts';
import { callbackServer, launchForLocalhost, openWithAuthenticator, PLATFORM_AUTHENTICATOR } from '../helpers/webauthn-browser.ts';

const PASSWORD = 'step up in a browser';
const MFA = 'urn:e2e:mfa';
const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;

describe('step-up from a password session to phr with the virtual authenticator (Chromium)', { skip }, () => {
  const clock = new ManualClock(Date.now());
  let server: RunningServer;
  let base: string;
  let browser: Browser;
  let callbackHost: Server;
  let callback: string;
  let client: Client;
  let clientSecret: string;
  /** Clients whose authorization policy requires phr, and phrh. */
  const strict = new Map<string, { client: Client; clientSecret: string }>();

  before(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    server = await startServer(sqlite, { clock, env: { GATEHOUSE_PORT: String(port), GATEHOUSE_ISSUER: `${base}/uas`, GATEHOUSE_ACR_LEVELS: `urn:e2e:pwd=single,${MFA}=multi,phr,phrh` } });
    ({ server: callbackHost, url: callback } = await callbackServer());
    ({ client, clientSecret } = await createTestClient(server.gatehouse.store, { redirectUris: [callback] }));
    for (const level of ['phr', 'phrh'] as const) {
      await server.gatehouse.store.policies.insert({ document: parsePolicyDocument({ name: `e2e-${level}`, minimum_authentication: level }), version: 1, createdAt: 0, updatedAt: 0 });
      strict.set(level, await createTestClient(server.gatehouse.store, { redirectUris: [callback], authorizationPolicy: `e2e-${level}` }));
    }
    browser = await launchForLocalhost();
  });
  after(async () => {
    await browser?.close();
    callbackHost?.close();
    await server?.close();
  });

  const urlOf = (extra: Record<string, string>) => authorizationUrl(base, { client_id: client.clientId, redirect_uri: callback, response_type: 'code', scope: 'openid', state: 'phr', ...extra });

  /** The ID token's amr, acr and auth_time for the code the browser landed with. */
  async function landed(page: Page, to: { client: Client; clientSecret: string } = { client, clientSecret }): Promise<[unknown, unknown, number]> {
    await page.waitForURL(`${callback}?**`);
    const code = new URL(page.url()).searchParams.get('code');
    assert.ok(code, `a code at ${page.url()}`);
    const tokens = await postForm(`${base}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: callback }, { authorization: basic(to.client.clientId, to.clientSecret) });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const claims = JSON.parse(Buffer.from(String(tokens.body.id_token).split('.')[1]!, 'base64url').toString()) as { amr: unknown; acr: unknown; auth_time: number };
    return [claims.amr, claims.acr, claims.auth_time];
  }

  test('password + TOTP at multi, then phr by acr_values and by an essential acr claim: only the passkey; amr ["pwd","otp","mfa","hwk"], acr phr, a new auth_time; then silent', { timeout: 180_000 }, async () => {
    const { store } = server.gatehouse;
    const user = await createTestUser(store, { username: `e2e-phr-${Date.now()}`, password: PASSWORD });
    // No passkey autofill: the login page must not sign in with the passkey by itself.
    const { context, page, problems } = await openWithAuthenticator(browser);
    const axe: Record<string, string[]> = {};
    try {
      // The passkey, added on the account page; then an authenticator app.
      await page.goto(`${base}/uas/account/security`);
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([page.waitForURL(`${base}/uas/account/security`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      await page.getByLabel('Name of the new passkey').fill('Laptop');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Add a passkey' }).click()]);
      await page.getByText('The passkey was added.').waitFor();
      const secret = await enrolTotp(store, user.id, clock.now());

      for (const [how, extra] of [
        ['acr_values', { acr_values: 'phr' }],
        ['claims', { claims: JSON.stringify({ id_token: { acr: { essential: true, value: 'phr' } } }) }],
      ] as const) {
        // A session at the multi level: the password, then the app's code.
        await context.clearCookies();
        clock.advance(60_000);
        await page.goto(urlOf({ acr_values: MFA }));
        await page.getByLabel('Username').fill(user.username);
        await page.getByLabel('Password').fill(PASSWORD);
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
        await page.getByLabel('Code from your authenticator app').fill(totpAt(secret, clock.now()));
        await page.getByRole('button', { name: 'Verify' }).click();
        const [amr, acr, authTime] = await landed(page);
        assert.deepEqual([amr, acr], [['pwd', 'otp', 'mfa'], MFA]);

        // phr: the passkey step only.
        clock.advance(60_000);
        await page.goto(urlOf(extra));
        await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
        assert.equal(await page.locator('input[name="password"]').count(), 0, `${how}: no password field`);
        assert.equal(await page.locator('input[name="code"]').count(), 0, `${how}: no code field`);
        axe[how] = await seriousViolations(page);
        await page.getByRole('button', { name: 'Use a passkey' }).click();
        assert.deepEqual(await landed(page), [['pwd', 'otp', 'mfa', 'hwk'], 'phr', authTime + 60], how);

        // Silent at phr: the authorization endpoint answers with the redirect, no page.
        const silent = await page.goto(urlOf({ ...extra, prompt: 'none' }));
        assert.equal(silent?.request().redirectedFrom()?.url().startsWith(`${base}/uas/oauth2/authorization?`), true, `${how}: straight to the client`);
        assert.deepEqual(await landed(page), [['pwd', 'otp', 'mfa', 'hwk'], 'phr', authTime + 60], how);
      }
    } finally {
      await context.close();
    }
    assert.deepEqual(axe, { acr_values: [], claims: [] });
    assert.deepEqual(problems, []);
  });

  test('a password-only session, then a passkey added on the account page, then phr: only the passkey; amr ["pwd","hwk","mfa"], acr phr', { timeout: 180_000 }, async () => {
    const user = await createTestUser(server.gatehouse.store, { username: `e2e-pwd-phr-${Date.now()}`, password: PASSWORD });
    const { context, page, problems } = await openWithAuthenticator(browser);
    try {
      // The password alone: the user has no factor yet.
      await page.goto(urlOf({}));
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      const [amr, acr, authTime] = await landed(page);
      assert.deepEqual([amr, acr], [['pwd'], 'urn:e2e:pwd']);

      // A passkey, added on the account page (its own sign-in where the page asks for one).
      await page.goto(`${base}/uas/account/security`);
      if ((await page.locator('input[name="password"]').count()) > 0) {
        await page.getByLabel('Username').fill(user.username);
        await page.getByLabel('Password').fill(PASSWORD);
        await Promise.all([page.waitForURL(`${base}/uas/account/security`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      }
      await page.getByLabel('Name of the new passkey').fill('Laptop');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Add a passkey' }).click()]);
      await page.getByText('The passkey was added.').waitFor();

      // phr from the password session: the passkey step only, never the password again.
      clock.advance(60_000);
      await page.goto(urlOf({ acr_values: 'phr' }));
      await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
      assert.deepEqual([await page.locator('input[name="password"]').count(), await page.locator('input[name="code"]').count()], [0, 0]);
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      const [steppedAmr, steppedAcr, steppedAuthTime] = await landed(page);
      assert.deepEqual([steppedAmr, steppedAcr], [['pwd', 'hwk', 'mfa'], 'phr']);
      assert.ok(steppedAuthTime > authTime, 'the step-up is a new authentication (auth_time)');
    } finally {
      await context.close();
    }
    assert.deepEqual(problems, []);
  });

  test('a user without a second factor at a client requiring phr creates a passkey after the password; at phrh a synced one is refused clearly, nothing issued; axe-clean', { timeout: 180_000 }, async () => {
    const { store } = server.gatehouse;
    const axe: Record<string, string[]> = {};
    for (const [level, synced] of [['phr', false], ['phrh', true]] as const) {
      const user = await createTestUser(store, { username: `e2e-enrol-${level}-${Date.now()}`, password: PASSWORD });
      // A synced passkey provider: its credentials are backup-eligible (WebAuthn L3 §6.1, BE).
      const { context, page, cdp, authenticatorId, problems } = await openWithAuthenticator(browser, synced ? { defaultBackupEligibility: true, defaultBackupState: true } : {});
      try {
        const to = strict.get(level)!;
        await page.goto(authorizationUrl(base, { client_id: to.client.clientId, redirect_uri: callback, response_type: 'code', scope: 'openid', state: level }));
        await page.getByLabel('Username').fill(user.username);
        await page.getByLabel('Password').fill(PASSWORD);
        await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
        const create = page.getByRole('button', { name: 'Create a passkey and continue' });
        await create.waitFor();
        assert.deepEqual([await page.locator('input[name="code"]').count(), await page.locator('input[name="password"]').count()], [0, 0], `${level}: the passkey only`);
        axe[level] = await seriousViolations(page);
        if (level === 'phr') {
          await create.click();
          assert.deepEqual((await landed(page, to)).slice(0, 2), [['pwd', 'hwk', 'mfa'], 'phrh']);
        } else {
          await Promise.all([page.waitForLoadState('load'), create.click()]);
          await page.getByText('it is synced between devices').waitFor();
          assert.equal(page.url().startsWith(callback), false, 'nothing issued');
          axe['phrh synced'] = await seriousViolations(page);
          assert.deepEqual((await store.factors.list(user.id)).map((f) => [f.kind, f.backupEligible]), [['passkey', true]]);
          // A device-bound authenticator (a security key) then meets phrh.
          await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
          await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { ...PLATFORM_AUTHENTICATOR, transport: 'usb' } });
          await page.getByRole('button', { name: 'Create a passkey and continue' }).click();
          assert.deepEqual((await landed(page, to)).slice(0, 2), [['pwd', 'hwk', 'mfa'], 'phrh']);
        }
        // The 401 of the synced passkey's page is expected; nothing else failed.
        assert.deepEqual(problems.filter((p) => !p.includes('401')), [], level);
      } finally {
        await context.close();
      }
    }
    assert.deepEqual(axe, { phr: [], phrh: [], 'phrh synced': [] });
  });

  test('a user with an app at a client requiring phr: the password, the app\'s code, then "Create a passkey and continue"; amr ["pwd","otp","mfa","hwk"]', { timeout: 120_000 }, async () => {
    const { store } = server.gatehouse;
    const user = await createTestUser(store, { username: `e2e-app-phr-${Date.now()}`, password: PASSWORD });
    const secret = await enrolTotp(store, user.id, clock.now());
    const { context, page, problems } = await openWithAuthenticator(browser);
    try {
      const to = strict.get('phr')!;
      await page.goto(authorizationUrl(base, { client_id: to.client.clientId, redirect_uri: callback, response_type: 'code', scope: 'openid', state: 'app-phr' }));
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      await page.getByLabel('Code from your authenticator app').fill(totpAt(secret, clock.now()));
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Verify' }).click()]);
      await page.getByRole('button', { name: 'Create a passkey and continue' }).click();
      assert.deepEqual((await landed(page, to)).slice(0, 2), [['pwd', 'otp', 'mfa', 'hwk'], 'phrh']);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
