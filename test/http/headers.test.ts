/**
 * Security headers and cookies (src/http/plugins/security-headers.ts, src/http/interaction/
 * cookies.ts): the same headers on every kind of answer — pages, JSON, redirects, errors, 404s,
 * refusals before routing — HSTS only under an https issuer, the login page's form-action widened
 * to its own redirect_uri's origin only, `__Host-` Secure cookies under an https issuer, and a
 * CSRF token in every form. The headers do not depend on the store: SQLite only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { contentSecurityPolicy, formActionSource } from '../../src/http/plugins/security-headers.ts';
import { createSession } from '../../src/oauth/sessions.ts';
import { basic, mintCode } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, loginThroughForm, logoutConfirmed, redirectParams, RP_REDIRECT_URI, submit } from '../helpers/fixtures.ts';
import { send, type RawRequest, type RawResponse } from '../helpers/raw-http.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'header test password';
const BASE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const HSTS = 'max-age=31536000; includeSubDomains';
const sqlite = DATABASES[0]!;

function portOf(server: RunningServer): number {
  return Number(new URL(server.url).port);
}

function assertSecurityHeaders(response: RawResponse, context: string, hsts: boolean): void {
  // The pages with a passkey ceremony (the login page, issue 24) also allow our own scripts and their fetch: 'self' only.
  const csp = response.headers['content-security-policy']?.replace("; script-src 'self'; connect-src 'self'", '');
  assert.ok(csp, `${context}: a Content-Security-Policy`);
  assert.ok(csp.startsWith("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'"), `${context}: ${csp}`);
  assert.ok(csp.endsWith("; frame-ancestors 'none'; base-uri 'none'"), `${context}: ${csp}`);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/, context);
  assert.equal(response.headers['x-frame-options'], 'DENY', context);
  assert.equal(response.headers['x-content-type-options'], 'nosniff', context);
  assert.equal(response.headers['referrer-policy'], 'no-referrer', context);
  assert.equal(response.headers['strict-transport-security'], hsts ? HSTS : undefined, context);
}

/** One of every kind of answer the server gives, with what it must be. */
async function everyKindOfAnswer(server: RunningServer, client: Client, secret: string): Promise<[string, RawResponse][]> {
  const port = portOf(server);
  const { deps, store } = server.gatehouse;
  const user = await createTestUser(store, { password: PASSWORD });
  const { cookieValue } = await createSession(deps, { userId: user.id });
  const sessionCookie = `${server.config.secureCookies ? '__Host-' : ''}gatehouse_session=${cookieValue}`;
  const query = (extra: Record<string, string> = {}) => new URLSearchParams({ client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid', ...extra }).toString();
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const { code } = await mintCode(store, client, user, { redirectUri: RP_REDIRECT_URI });
  const requests: [string, RawRequest, number][] = [
    ['discovery', { method: 'GET', target: '/uas/.well-known/openid-configuration' }, 200],
    ['JWKS', { method: 'GET', target: '/uas/oauth2/metadata.jwks' }, 200],
    ['health', { method: 'GET', target: '/health/live' }, 200],
    ['readiness', { method: 'GET', target: '/health/ready' }, 200],
    ['stylesheet', { method: 'GET', target: '/uas/assets/login.css' }, 200],
    ['login page', { method: 'GET', target: `/uas/oauth2/authorization?${query()}` }, 200],
    ['authorization error page', { method: 'GET', target: '/uas/oauth2/authorization?client_id=nobody' }, 400],
    ['authorization error redirect', { method: 'GET', target: `/uas/oauth2/authorization?${query({ response_type: 'token' })}` }, 302],
    ['code redirect', { method: 'GET', target: `/uas/oauth2/authorization?${query()}`, headers: [['cookie', sessionCookie]] }, 302],
    ['login POST refused (CSRF)', { method: 'POST', target: '/uas/oauth2/authorization/login', headers: Object.entries(form), body: query({ username: user.username, password: PASSWORD }) }, 403],
    ['token', { method: 'POST', target: '/uas/oauth2/token', headers: [...Object.entries(form), ['authorization', basic(client.clientId, secret)]], body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: RP_REDIRECT_URI }).toString() }, 200],
    ['token error', { method: 'POST', target: '/uas/oauth2/token', headers: Object.entries(form), body: 'grant_type=nope' }, 400],
    ['token 401', { method: 'POST', target: '/uas/oauth2/token', headers: [...Object.entries(form), ['authorization', basic(client.clientId, 'wrong')]], body: 'grant_type=authorization_code' }, 401],
    ['introspection 401', { method: 'POST', target: '/uas/oauth2/introspection', headers: Object.entries(form), body: 'token=x' }, 401],
    ['revocation', { method: 'POST', target: '/uas/oauth2/revocation', headers: [...Object.entries(form), ['authorization', basic(client.clientId, secret)]], body: 'token=x' }, 200],
    ['userinfo 401', { method: 'GET', target: '/uas/oauth2/userinfo' }, 401],
    ['status', { method: 'GET', target: '/uas/status?entityID=x&sessionIndex=y' }, 200],
    ['status XML', { method: 'GET', target: '/uas/status?type=application%2Fxml' }, 200],
    ['signed-out page', { method: 'GET', target: '/uas/oauth2/logout' }, 200],
    ['logout error page', { method: 'GET', target: '/uas/oauth2/logout?post_logout_redirect_uri=https%3A%2F%2Fevil.example%2F' }, 400],
    ['identity API 401', { method: 'GET', target: '/customerid-rest/services/2.0/users/' }, 401],
    ['404', { method: 'GET', target: '/no/such/page' }, 404],
    ['413', { method: 'POST', target: '/uas/oauth2/token', headers: Object.entries(form), body: `x=${'a'.repeat(70_000)}` }, 413],
    ['malformed query', { method: 'GET', target: '/uas/status?a=%FF' }, 400],
    ['undecodable path', { method: 'GET', target: '/uas/status%' }, 400],
    ['unsupported Expect', { method: 'GET', target: '/health/live', headers: [['expect', 'teapot']] }, 417],
    ['431 before routing', { method: 'GET', target: '/health/live', headers: [['x-filler', 'a'.repeat(20_000)]] }, 431],
    ['400 before routing', { method: 'GET', target: '/health/live', headers: [['x-bad', 'a\u0000b']] }, 400],
  ];
  const out: [string, RawResponse][] = [];
  for (const [name, request, status] of requests) {
    const response = await send(port, request);
    assert.equal(response.status, status, `${name}: ${response.body.slice(0, 200)}`);
    out.push([name, response]);
  }
  return out;
}

describe('security headers on every answer (http issuer)', () => {
  let server: RunningServer;
  let client: Client;
  let secret: string;
  before(async () => {
    server = await startServer(sqlite);
    ({ client, clientSecret: secret } = await createTestClient(server.gatehouse.store));
  });
  after(async () => server.close());

  test('pages, JSON, redirects, errors, 404s and refusals before routing all carry CSP, X-Frame-Options, nosniff and Referrer-Policy, and no HSTS over http', async () => {
    for (const [name, response] of await everyKindOfAnswer(server, client, secret)) assertSecurityHeaders(response, name, false);
  });

  test("the policy allows nothing but our stylesheet and forms to us; the login page's form-action adds only its redirect_uri's origin", async () => {
    const plain = await send(portOf(server), { method: 'GET', target: '/health/live' });
    assert.equal(plain.headers['content-security-policy'], BASE_CSP);
    const page = await browse(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid' }));
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-security-policy'), BASE_CSP.replace("form-action 'self'", "form-action 'self' https://rp.example.test").replace("default-src 'none'", "default-src 'none'; script-src 'self'; connect-src 'self'"));

    const { client: native } = await createTestClient(server.gatehouse.store, { redirectUris: ['com.example.app:/cb', 'http://127.0.0.1/cb'], tokenEndpointAuthMethod: 'none', metadata: { application_type: 'native' } });
    const pkce = { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
    const app = await browse(authorizationUrl(server.url, { client_id: native.clientId, redirect_uri: 'com.example.app:/cb', response_type: 'code', ...pkce }));
    assert.match(app.headers.get('content-security-policy') ?? '', /form-action 'self' com\.example\.app:;/);
    const loopback = await browse(authorizationUrl(server.url, { client_id: native.clientId, redirect_uri: 'http://127.0.0.1:49152/cb', response_type: 'code', ...pkce }));
    assert.match(loopback.headers.get('content-security-policy') ?? '', /form-action 'self' http:\/\/127\.0\.0\.1:49152;/, 'the loopback port asked for, not any');
  });

  test('formActionSource: an origin for http(s), the scheme for a private-use scheme, nothing for what CSP cannot express safely', () => {
    assert.equal(formActionSource('https://rp.example/cb?x=1'), 'https://rp.example');
    assert.equal(formActionSource('https://RP.Example:8443/cb'), 'https://rp.example:8443');
    assert.equal(formActionSource('https://bücher.example/cb'), 'https://xn--bcher-kva.example');
    assert.equal(formActionSource('com.example.app:/cb'), 'com.example.app:');
    assert.equal(formActionSource('http://[::1]:8080/cb'), 'http:', 'CSP has no syntax for IPv6 hosts');
    assert.equal(formActionSource('not a url'), undefined);
    assert.equal(contentSecurityPolicy(['https://a.example']), BASE_CSP.replace("form-action 'self'", "form-action 'self' https://a.example"));
  });

  test('cookies over http: HttpOnly and SameSite, no Secure, no __Host- prefix', async () => {
    const jar = new CookieJar();
    const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    const response = await loginThroughForm({ baseUrl: server.url, jar }, { client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid' }, { username: user.username, password: PASSWORD });
    assert.equal(response.status, 303);
    const session = response.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='));
    assert.match(session ?? '', /; Path=\/; HttpOnly; SameSite=Lax$/);
    assert.ok(jar.cookies.has('gatehouse_csrf'));
  });
});

describe('security headers and cookies under an https issuer (the test server still listens on http)', () => {
  let server: RunningServer;
  let client: Client;
  let secret: string;
  before(async () => {
    server = await startServer(sqlite, { env: { GATEHOUSE_ISSUER: 'https://sso.example.test/uas' } });
    ({ client, clientSecret: secret } = await createTestClient(server.gatehouse.store));
  });
  after(async () => server.close());

  test('every answer also carries Strict-Transport-Security', async () => {
    assert.equal(server.config.secureCookies, true);
    for (const [name, response] of await everyKindOfAnswer(server, client, secret)) assertSecurityHeaders(response, name, true);
  });

  test('the CSRF and session cookies are __Host- prefixed, Secure, HttpOnly, Path=/, without Domain; logout clears the session cookie the same way', async () => {
    const jar = new CookieJar();
    const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    const query = { client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid' };
    const page = await browse(authorizationUrl(server.url, query), jar);
    const csrf = page.headers.getSetCookie().find((c) => c.startsWith('__Host-gatehouse_csrf='));
    assert.match(csrf ?? '', /^__Host-gatehouse_csrf=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    await page.body?.cancel();

    const response = await loginThroughForm({ baseUrl: server.url, jar }, query, { username: user.username, password: PASSWORD });
    assert.equal(response.status, 303, 'the form posts back the __Host- CSRF cookie and signs in');
    assert.ok((response.headers.get('location') ?? '').includes(`iss=${encodeURIComponent('https://sso.example.test/uas')}`));
    const session = response.headers.getSetCookie().find((c) => c.startsWith('__Host-gatehouse_session='));
    assert.match(session ?? '', /^__Host-gatehouse_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    assert.doesNotMatch(session ?? '', /Domain|Max-Age|Expires/i);
    assert.equal(response.headers.getSetCookie().some((c) => c.startsWith('gatehouse_')), false, 'no unprefixed cookie');

    const silent = await browse(authorizationUrl(server.url, query), jar);
    assert.equal(silent.status, 302, 'the __Host- session cookie gives single sign-on');

    const logout = await logoutConfirmed(server.url, jar);
    const cleared = logout.headers.getSetCookie().find((c) => c.startsWith('__Host-gatehouse_session='));
    for (const attribute of ['Max-Age=0', 'Path=/', 'HttpOnly', 'Secure', 'SameSite=Lax']) assert.ok((cleared ?? '').split('; ').includes(attribute), `${attribute} in ${cleared}`);
  });

  test('an unprefixed cookie of the same name is ignored under https (it could have been tossed in from a subdomain)', async () => {
    const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    const { cookieValue } = await createSession(server.gatehouse.deps, { userId: user.id });
    const response = await browse(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid' }), undefined, { cookie: `gatehouse_session=${cookieValue}` });
    assert.equal(response.status, 200, 'the login page, not single sign-on');
    await response.body?.cancel();
    // The control: the same session under the prefixed name signs in silently.
    const prefixed = await browse(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid' }), undefined, { cookie: `__Host-gatehouse_session=${cookieValue}` });
    assert.equal(prefixed.status, 302);
    assert.ok(redirectParams(prefixed).get('code'), 'a code by single sign-on');
  });
});

describe('a CSRF token in every form', () => {
  let server: RunningServer;
  let client: Client;
  before(async () => {
    server = await startServer(sqlite);
    ({ client } = await createTestClient(server.gatehouse.store));
  });
  after(async () => server.close());

  test('every page the server renders either has no form or carries csrf_token equal to the CSRF cookie', async () => {
    const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    const query = (extra: Record<string, string> = {}) => ({ client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid', ...extra });
    const pages: [string, () => Promise<[Response, CookieJar]>][] = [
      ['login page', async () => { const jar = new CookieJar(); return [await browse(authorizationUrl(server.url, query()), jar), jar]; }],
      ['popup', async () => { const jar = new CookieJar(); return [await browse(authorizationUrl(server.url, query({ display: 'popup' })), jar), jar]; }],
      ['touch', async () => { const jar = new CookieJar(); return [await browse(authorizationUrl(server.url, query({ display: 'touch' })), jar), jar]; }],
      ['failed login', async () => { const jar = new CookieJar(); return [await loginThroughForm({ baseUrl: server.url, jar }, query(), { username: user.username, password: 'wrong' }), jar]; }],
      ['expired form', async () => {
        const jar = new CookieJar();
        const fields = Object.entries({ ...query(), csrf_token: 'x'.repeat(43), username: user.username, password: PASSWORD });
        return [await submit(`${server.url}/uas/oauth2/authorization/login`, fields, jar), jar];
      }],
      ['error page', async () => [await browse(authorizationUrl(server.url, { client_id: 'nobody' })), new CookieJar()]],
      ['signed-out page', async () => [await browse(`${server.url}/uas/oauth2/logout`), new CookieJar()]],
      ['logout confirmation', async () => {
        const jar = new CookieJar();
        await loginThroughForm({ baseUrl: server.url, jar }, query(), { username: user.username, password: PASSWORD });
        return [await browse(`${server.url}/uas/oauth2/logout`, jar), jar];
      }],
      ['expired logout form', async () => {
        const jar = new CookieJar();
        await loginThroughForm({ baseUrl: server.url, jar }, query(), { username: user.username, password: PASSWORD });
        return [await submit(`${server.url}/uas/oauth2/logout`, { csrf_token: 'x'.repeat(43) }, jar), jar];
      }],
    ];
    let forms = 0;
    for (const [name, open] of pages) {
      const [response, jar] = await open();
      const html = await response.text();
      // Every form of the page (the login pages also have the passkey form, issue 24) carries the token.
      for (const form of html.match(/<form\b[\s\S]*?<\/form>/g) ?? []) {
        forms += 1;
        const token = [...form.matchAll(/<input type="hidden" name="csrf_token" value="([^"]*)">/g)].map((m) => m[1]!);
        assert.equal(token.length, 1, `${name}: one csrf_token field`);
        assert.match(token[0]!, /^[A-Za-z0-9_-]{43}$/, name);
        assert.equal(jar.cookies.get('gatehouse_csrf'), token[0], `${name}: the field equals the cookie`);
      }
    }
    assert.equal(forms, 12, 'the login page (its form and its passkey form) in three layouts, after a failure and after an expired form; the logout confirmation, also after an expired form');
  });
});
