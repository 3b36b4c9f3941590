/**
 * Levels of authentication end to end in Chromium (issue 24, Done when: "policy requiring MFA for
 * one client but not another, in the same SSO session"): one browser signs in to client B with
 * the password alone; client A, whose authorization policy requires `multi`, then asks only for
 * the authenticator's code (computed at the server's injected clock), never the password; B then
 * answers silently from the stepped-up session. A user without a second factor is led through
 * adding an app at A before any code. Each page is axe-clean under its real CSP.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, totpAt } from '../helpers/factors.ts';
import { authorizationUrl, createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\``;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'levels in a browser';
const MFA = 'urn:e2e:mfa';
const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;

/** axe-core's serious and critical violations of the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate<{ violations: { id: string; impact: string | null }[] }>(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } })`);
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
}

describe('a policy requiring MFA for one client but not another, in one SSO session (Chromium)', { skip }, () => {
  const clock = new ManualClock(Date.now());
  let server: RunningServer;
  let browser: Browser;
  let callback: Server;
  let urlOf: (client: 'A' | 'B') => string;

  before(async () => {
    server = await startServer(sqlite, { clock, env: { GATEHOUSE_ACR_LEVELS: `urn:e2e:pwd=single,${MFA}=multi` } });
    callback = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('callback reached'));
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    const redirect = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    const { store } = server.gatehouse;
    await store.policies.insert({ document: parsePolicyDocument({ name: 'e2e-mfa', minimum_authentication: 'multi' }), version: 1, createdAt: 0, updatedAt: 0 });
    const { client: a } = await createTestClient(store, { name: 'Payroll', redirectUris: [redirect], authorizationPolicy: 'e2e-mfa' });
    const { client: b } = await createTestClient(store, { name: 'Library', redirectUris: [redirect] });
    urlOf = (which) => {
      const client = which === 'A' ? a : b;
      return authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: which });
    };
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
  });
  after(async () => {
    await browser?.close();
    callback?.close();
    await server?.close();
  });

  /** The code the browser's last redirect carried to the client, and that code's amr and acr as stored. */
  async function landed(page: Page) {
    await page.waitForURL(/\/callback\?/);
    const code = new URL(page.url()).searchParams.get('code')!;
    const stored = await server.gatehouse.store.codes.consumeOnce(hashSecret(code), clock.now());
    assert.equal(stored.outcome, 'redeemed');
    return stored.outcome === 'redeemed' ? [stored.code.amr, stored.code.acr] : [];
  }

  test('B with the password; A asks only for the TOTP code; B then silent with the stepped-up session', { timeout: 120_000 }, async () => {
    const { store } = server.gatehouse;
    const user = await createTestUser(store, { username: `e2e-levels-${Date.now()}`, password: PASSWORD });
    const secret = await enrolTotp(store, user.id, clock.now());
    const context = await browser.newContext();
    const page = await context.newPage();
    const found: Record<string, string[]> = {};
    try {
      // B: the password, then the factor the user has (asked of every user who has one).
      await page.goto(urlOf('B'));
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByLabel('Code from your authenticator app').fill(totpAt(secret, clock.now()));
      await page.getByRole('button', { name: 'Verify' }).click();
      assert.deepEqual(await landed(page), [['pwd', 'otp', 'mfa'], MFA]);
      // A password-only session for B: what a session made before the factor looks like.
      await context.clearCookies();
      const plain = await createTestUser(store, { username: `e2e-plain-${Date.now()}`, password: PASSWORD });
      await page.goto(urlOf('B'));
      await page.getByLabel('Username').fill(plain.username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      assert.deepEqual(await landed(page), [['pwd'], 'urn:e2e:pwd']);
      const plainSecret = await enrolTotp(store, plain.id, clock.now());
      clock.advance(30_000);
      // A: the policy requires MFA; the session's user is asked only for the code, no password.
      await page.goto(urlOf('A'));
      await page.getByRole('heading', { name: 'Verify it is you' }).waitFor();
      assert.equal(await page.getByLabel('Password').count(), 0, 'no password field');
      found['step-up page'] = await seriousViolations(page);
      await page.getByLabel('Code from your authenticator app').fill(totpAt(plainSecret, clock.now()));
      await page.getByRole('button', { name: 'Verify' }).click();
      assert.deepEqual(await landed(page), [['pwd', 'otp', 'mfa'], MFA]);
      // B again: single sign-on from the stepped-up session, no page.
      await page.goto(urlOf('B'));
      assert.deepEqual(await landed(page), [['pwd', 'otp', 'mfa'], MFA]);
    } finally {
      await context.close();
    }
    assert.deepEqual(found, { 'step-up page': [] });
  });

  test('A for a user without a second factor: add an authenticator app after the password, then the code; axe-clean', { timeout: 120_000 }, async () => {
    const user = await createTestUser(server.gatehouse.store, { username: `e2e-enrol-${Date.now()}`, password: PASSWORD });
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(urlOf('A'));
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
      assert.deepEqual(await seriousViolations(page), []);
      const secret = await page.locator('input[name="secret"]').getAttribute('value');
      await page.getByLabel('Code the app shows now').fill('000000');
      await page.getByRole('button', { name: 'Add the app and continue' }).click();
      await page.locator('#code-message').waitFor();
      assert.equal(await page.getAttribute('#code', 'aria-invalid'), 'true');
      assert.deepEqual(await seriousViolations(page), []);
      await page.getByLabel('Code the app shows now').fill(totpAt(secret!, clock.now()));
      await page.getByRole('button', { name: 'Add the app and continue' }).click();
      assert.deepEqual(await landed(page), [['pwd', 'otp', 'mfa'], MFA]);
    } finally {
      await context.close();
    }
  });
});
