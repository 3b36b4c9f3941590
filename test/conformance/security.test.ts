/**
 * Conformance: cross-cutting security of the front channel and of issued secrets (RFC 9700
 * §2.6, §4.2.4, §4.11, §4.16; RFC 6749 §10.10; research/conformance.md AZ-20, AZ-41, AZ-42,
 * AZ-45, SEC-*). docs/conformance.md maps the rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, createTestClient, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertErrorPage, assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { assertTokenResponse, authorize, codeRequest, CookieJar, redeem, submitLogin, type Credentials } from './helpers.ts';

const PASSWORD = 'conformance security 1';
const [sqlite] = DATABASES;

describe('conformance: front-channel security and secrets on sqlite', () => {
  let server: RunningServer;
  let client: Client;
  let secret: string;
  let credentials: Credentials;
  const origin = { origin: 'https://attacker.example.test' };

  before(async () => {
    server = await startServer(sqlite!);
    ({ client, clientSecret: secret } = await createTestClient(server.gatehouse.store, { refreshTokens: true }));
    const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    credentials = { username: user.username, password: PASSWORD };
  });
  after(async () => server.close());

  /** The answers a browser gets from the authorization endpoint: login page, login POST redirect, silent redirect, error redirect, error page. */
  async function frontChannelAnswers(): Promise<[string, Response][]> {
    const jar = new CookieJar();
    const page = await browse(authorizationUrl(server.url, codeRequest(client)), jar, origin);
    const loginPage = page.clone();
    const afterLogin = await submitLogin(server, jar, page, credentials);
    const silent = await browse(authorizationUrl(server.url, codeRequest(client)), jar, origin);
    const errorRedirect = await browse(authorizationUrl(server.url, codeRequest(client, { response_type: 'token' })), undefined, origin);
    const errorPage = await browse(authorizationUrl(server.url, codeRequest(client, { redirect_uri: 'https://attacker.example.test/cb' })), undefined, origin);
    const preflight = await fetch(`${server.url}/uas/oauth2/authorization`, { method: 'OPTIONS', headers: { ...origin, 'access-control-request-method': 'POST' } });
    return [['login page', loginPage], ['login POST', afterLogin], ['silent code', silent], ['error redirect', errorRedirect], ['error page', errorPage], ['preflight', preflight]];
  }

  test('no CORS on the authorization endpoint, even for a request with an Origin: login page, redirects, error page, preflight (AZ-42)', async () => {
    for (const [what, response] of await frontChannelAnswers()) {
      assert.equal(response.headers.get('access-control-allow-origin'), null, what);
      assert.equal(response.headers.get('access-control-allow-credentials'), null, what);
      if (what === 'preflight') assert.ok(response.status >= 400, `a preflight is not granted (${response.status})`);
    }
  });

  test('pages and redirects leak no Referer and cannot be framed; the login page loads nothing from another origin (AZ-41, AZ-45)', async () => {
    for (const [what, response] of await frontChannelAnswers()) {
      if (what === 'preflight') continue;
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer', what);
      if (response.status === 200 || response.status === 400) {
        assert.match(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, what);
        assert.equal(response.headers.get('x-frame-options'), 'DENY', what);
        const html = await response.text();
        // The one link elsewhere: the error page's way back to the verified client's registered origin (it loads nothing).
        const back = [...html.matchAll(/<a class="back" href="([^"]*)">/g)].map((m) => m[1]);
        assert.deepEqual(back, what === 'error page' ? [new URL(client.redirectUris[0]!).origin] : [], what);
        for (const [, url] of html.replace(/<a class="back" href="[^"]*">/g, '').matchAll(/\b(?:src|href|action)="([^"]*)"/g)) assert.ok(!/^(https?:)?\/\//i.test(url!), `${what} loads ${url}`);
      }
    }
  });

  test('no open redirector: return_to, next or goto parameters never redirect there; the success redirects go to the registered URIs only, and an unregistered one is refused (AZ-20)', async () => {
    const evil = 'https://attacker.example.test/phish';
    const hops = { return_to: evil, next: evil, goto: evil, redirect: evil, redirect_to: evil, continue: evil };
    const afterLogout = 'https://rp.example.test/logged-out';
    const { client: rp, clientSecret: rpSecret } = await createTestClient(server.gatehouse.store, { postLogoutRedirectUris: [afterLogout] });
    const jar = new CookieJar();

    // The success path of the authorization endpoint, with the hops in the request and in the login form: the code goes to the registered redirect_uri.
    const page = await browse(authorizationUrl(server.url, codeRequest(rp, hops)), jar);
    const html = await assertLoginPage(page);
    const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? credentials.username : name === 'password' ? credentials.password : value]);
    const loggedIn = await submit(`${new URL(formAction(html), server.url)}?${new URLSearchParams(hops)}`, [...fields, ...Object.entries(hops)], jar);
    assertCodeRedirect(loggedIn, { redirectUri: rp.redirectUris[0]!, state: 'conformance-state', issuer: server.issuer, status: 303 });
    // Single sign-on: the silent answer goes there too.
    assertCodeRedirect(await browse(authorizationUrl(server.url, codeRequest(rp, hops)), jar), { redirectUri: rp.redirectUris[0]!, state: 'conformance-state', issuer: server.issuer });
    // The same requests naming the attacker's URI as redirect_uri: the error page, with a session and without one.
    for (const browser of [jar, new CookieJar()]) {
      await assertErrorPage(await browse(authorizationUrl(server.url, codeRequest(rp, { ...hops, redirect_uri: evil })), browser), 'invalid_redirect_uri');
    }

    // Logout: an unregistered post_logout_redirect_uri is refused, the session lives on; the registered one is where the browser goes.
    await assertErrorPage(await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ ...hops, client_id: rp.clientId, post_logout_redirect_uri: evil })}`, jar), 'invalid_request');
    const code = assertCodeRedirect(await browse(authorizationUrl(server.url, codeRequest(rp)), jar), { redirectUri: rp.redirectUris[0]!, state: 'conformance-state', issuer: server.issuer });
    // A post-logout redirect needs a valid id_token_hint (finding 9: without one the user is asked first).
    const idToken = assertTokenResponse(await redeem(server, rp, rpSecret, code)).id_token as string;
    // Without a post_logout_redirect_uri the hops lead nowhere: the signed-out page.
    const signedOut = await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ ...hops, id_token_hint: idToken })}`, jar);
    assert.equal(signedOut.status, 200);
    assert.equal(signedOut.headers.get('location'), null);
    const loggedOut = await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ ...hops, id_token_hint: idToken, post_logout_redirect_uri: afterLogout })}`, jar);
    assert.equal(loggedOut.status, 302);
    assert.equal(loggedOut.headers.get('location'), afterLogout);
  });

  test('codes, access tokens and refresh tokens are 256-bit base64url values, all distinct (SEC-01, AZ-12, AC-07, RT-01)', async () => {
    const jar = new CookieJar();
    const seen = new Set<string>();
    for (let i = 0; i < 10; i += 1) {
      const { code } = await authorize(server, jar, codeRequest(client), credentials, { expectLogin: i === 0 });
      const body = assertTokenResponse(await redeem(server, client, secret, code));
      for (const value of [code, body.access_token as string, body.refresh_token as string]) {
        assert.match(value, /^[A-Za-z0-9_-]{43}$/);
        assert.ok(Buffer.from(value, 'base64url').length === 32);
        assert.ok(!seen.has(value), 'never repeated');
        seen.add(value);
      }
    }
    assert.equal(seen.size, 30);
  });
});
