/**
 * response_mode=form_post in a real browser (Chromium through playwright-core) with openid-client
 * as the relying party: a tiny local web server receives the POST at its redirect_uri and redeems
 * the code with authorizationCodeGrant given the incoming Request (OAuth 2.0 Form Post Response
 * Mode §2). With JavaScript the page submits itself, under the strict CSP (our script file, no
 * inline script); without it, the <noscript> button does. Single sign-on answers by form_post too.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Client } from '../../src/domain/client.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the browser test`;
const PASSWORD = 'form post browser password 1';

/** What the relying party saw at its redirect_uri, and what openid-client made of it. */
interface Arrival {
  method: string;
  contentType: string | undefined;
  referer: string | undefined;
  origin: string | undefined;
  subject?: string;
  error?: string;
}

/** The relying party: checks of one pending authorization, keyed by state. */
interface Pending {
  config: oidc.Configuration;
  verifier: string;
  nonce: string;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A relying party's callback: it turns the incoming POST into a fetch Request and gives it to
 * openid-client, which reads the form body, checks state and iss, and redeems the code.
 */
async function startRelyingParty(): Promise<{ url: string; server: Server; pending: Map<string, Pending>; arrivals: Arrival[] }> {
  const pending = new Map<string, Pending>();
  const arrivals: Arrival[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      // The browser also asks the RP's origin for /favicon.ico: only the callback is the RP's business.
      if (!request.url?.startsWith('/callback')) return void response.writeHead(404).end();
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${request.url ?? '/'}`;
      const arrival: Arrival = { method: request.method ?? '', contentType: request.headers['content-type'], referer: request.headers.referer, origin: request.headers.origin };
      arrivals.push(arrival);
      try {
        const state = new URLSearchParams(body).get('state') ?? '';
        const checks = pending.get(state);
        if (checks === undefined) throw new Error(`no pending authorization for state ${state}`);
        const incoming = new Request(url, { method: request.method, headers: { 'content-type': request.headers['content-type'] ?? '' }, body: request.method === 'POST' ? body : undefined });
        const tokens = await oidc.authorizationCodeGrant(checks.config, incoming, { pkceCodeVerifier: checks.verifier, expectedState: state, expectedNonce: checks.nonce, idTokenExpected: true });
        arrival.subject = tokens.claims()?.sub;
        response.writeHead(200, { 'content-type': 'text/plain' }).end(`signed in as ${arrival.subject}`);
      } catch (error) {
        // An AuthorizationResponseError carries the server's error code as `error`.
        const code = (error as { error?: unknown }).error;
        arrival.error = typeof code === 'string' ? code : error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        response.writeHead(400, { 'content-type': 'text/plain' }).end('relying party refused the response');
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, server, pending, arrivals };
}

for (const db of DATABASES) {
  describe(`form_post in Chromium with openid-client on ${db.name}`, { skip }, () => {
    let server: RunningServer;
    let browser: Browser;
    let rp: Awaited<ReturnType<typeof startRelyingParty>>;
    let client: Client;
    let config: oidc.Configuration;

    before(async () => {
      server = await startServer(db);
      rp = await startRelyingParty();
      let secret: string;
      ({ client, clientSecret: secret } = await createTestClient(server.gatehouse.store, { redirectUris: [rp.url] }));
      // allowInsecureRequests: the test issuer is http on loopback; production issuers are https.
      config = await oidc.discovery(new URL(server.issuer), client.clientId, secret, oidc.ClientSecretBasic(secret), { execute: [oidc.allowInsecureRequests] });
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      });
    });
    after(async () => {
      await browser?.close();
      rp?.server.close();
      await server?.close();
    });

    /** openid-client builds the request; the RP remembers its checks under the state. */
    async function authorizationUrl(extra: Record<string, string> = {}): Promise<{ url: string; state: string }> {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      rp.pending.set(state, { config, verifier, nonce });
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: rp.url, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce, response_mode: 'form_post', ...extra });
      return { url: url.href, state };
    }

    /** Console errors (CSP violations among them) and failed loads, except the favicon and the RP's own answer. */
    function watch(page: Page): string[] {
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().includes('status of 404')) problems.push(message.text());
      });
      page.on('response', (response) => {
        if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) problems.push(`${response.status()} ${response.url()}`);
      });
      return problems;
    }

    async function logIn(page: Page, username: string): Promise<void> {
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    }

    test('log in: the page posts the code to the relying party by itself, openid-client redeems it; single sign-on posts again without the form (RM-09)', async () => {
      const user = await createTestUser(server.gatehouse.store, { username: `fp-${Date.now()}`, password: PASSWORD });
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems = watch(page);
      try {
        const first = await authorizationUrl();
        await page.goto(first.url);
        const seen = rp.arrivals.length;
        await Promise.all([page.waitForURL(rp.url, { timeout: 15_000 }), logIn(page, user.username)]);
        assert.equal(await page.textContent('body'), `signed in as ${user.id}`);
        // Referrer-Policy: no-referrer: no Referer, and Fetch serialises the POST's Origin as "null" (docs/authorization.md, "Response modes").
        assert.deepEqual(rp.arrivals.slice(seen), [{ method: 'POST', contentType: 'application/x-www-form-urlencoded', referer: undefined, origin: 'null', subject: user.id }]);

        const second = await authorizationUrl();
        const response = await page.goto(second.url);
        await page.waitForURL(rp.url, { timeout: 15_000 });
        assert.equal(await page.textContent('body'), `signed in as ${user.id}`);
        assert.equal(rp.arrivals.length, seen + 2);
        assert.deepEqual(rp.arrivals.at(-1), { method: 'POST', contentType: 'application/x-www-form-urlencoded', referer: undefined, origin: 'null', subject: user.id });
        assert.equal(response?.url().startsWith(`${server.url}/uas/oauth2/authorization`), true, 'the form_post page came straight from the authorization endpoint');
        assert.deepEqual(problems, [], 'no CSP violations, failed loads or other page errors');
      } finally {
        await context.close();
      }
    });

    test('without JavaScript: the page waits with its Continue button, which posts the code (RM-10)', async () => {
      const user = await createTestUser(server.gatehouse.store, { username: `fp-nojs-${Date.now()}`, password: PASSWORD });
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      const problems = watch(page);
      try {
        await page.goto((await authorizationUrl({ ui_locales: 'sv' })).url);
        const seen = rp.arrivals.length;
        await page.getByLabel('Användarnamn').fill(user.username);
        await page.getByLabel('Lösenord').fill(PASSWORD);
        await page.getByRole('button').first().click();
        await page.waitForLoadState();
        assert.ok(page.url().startsWith(`${server.url}/uas/`), `still on our page: ${page.url()}`);
        assert.equal(rp.arrivals.length, seen, 'nothing posted before the user acts');
        assert.equal(await page.title(), 'Tillbaka till applikationen');
        await Promise.all([page.waitForURL(rp.url, { timeout: 15_000 }), page.getByRole('button', { name: 'Fortsätt' }).click()]);
        assert.equal(await page.textContent('body'), `signed in as ${user.id}`);
        assert.deepEqual(rp.arrivals.slice(seen), [{ method: 'POST', contentType: 'application/x-www-form-urlencoded', referer: undefined, origin: 'null', subject: user.id }]);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });

    test('an error travels by form_post too: prompt=none without a session reaches the relying party as login_required (RM-09)', async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      try {
        const { url } = await authorizationUrl({ prompt: 'none' });
        const seen = rp.arrivals.length;
        await page.goto(url);
        await page.waitForURL(rp.url, { timeout: 15_000 });
        const [arrival] = rp.arrivals.slice(seen);
        assert.equal(arrival?.method, 'POST');
        assert.equal(arrival?.error, 'login_required');
      } finally {
        await context.close();
      }
    });
  });
}
