/**
 * Response modes at the authorization endpoint (OAuth 2.0 Multiple Response Type Encoding
 * Practices §2.1, OAuth 2.0 Form Post Response Mode §2): query, fragment and form_post deliver
 * every answer — a code after a login or by single sign-on, and each kind of error once the
 * redirect_uri is verified — the way the request asked; an unusable mode is invalid_request by the
 * default mode, query. The form_post page: hidden fields escaped by the template, posted to the
 * redirect_uri by our script file under a CSP without inline script, never cached, no Referer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, ERROR_TEXT, formAction, formFields, loginThroughForm, signTestIdToken } from '../helpers/fixtures.ts';
import { assertErrorPage, assertErrorRedirect } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'response modes password 1';
const REDIRECT = 'https://rp.example.test/cb?tenant=a';

/** What the form_post page posts, checked as the page and its headers must be. */
async function assertFormPost(response: Response, redirectUri: string): Promise<Map<string, string>> {
  assert.equal(response.status, 200, `expected the form_post page, got ${response.status} ${response.headers.get('location') ?? ''}`);
  assert.equal(response.headers.get('location'), null);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
  const csp = response.headers.get('content-security-policy') ?? '';
  const directives = new Map(csp.split(';').map((part) => part.trim().split(/\s+/)).map(([name = '', ...sources]) => [name, sources]));
  // The page's one script is ours, by URL: no inline script, no eval, nothing else.
  assert.deepEqual(directives.get('script-src'), ["'self'"], csp);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|nonce-|sha256-/);
  assert.deepEqual(directives.get('form-action'), ["'self'", new URL(redirectUri).origin], csp);
  assert.deepEqual(directives.get('frame-ancestors'), ["'none'"]);
  assert.deepEqual(directives.get('default-src'), ["'none'"]);
  const html = await response.text();
  assert.doesNotMatch(html, /<script>|<script [^>]*>[^<]+<\/script>|\son[a-z]+=/i, 'no inline script or event handler');
  const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((match) => /\bsrc="([^"]*)"/.exec(match[1] ?? '')?.[1]);
  assert.deepEqual(scripts, ['/uas/assets/form-post.js']);
  assert.equal(formAction(html), redirectUri);
  assert.match(html, /<form method="post" action="[^"]*" id="form-post">/);
  assert.match(html, /<noscript>[\s\S]*<button type="submit">[\s\S]*<\/noscript>/, 'a button for browsers without JavaScript');
  const fields = formFields(html);
  assert.equal(new Set(fields.map(([name]) => name)).size, fields.length, 'each field once');
  return new Map(fields);
}

function assertFormPostCode(fields: Map<string, string>, expected: { state?: string; issuer: string }): string {
  assert.deepEqual([...fields.keys()].sort(), ['code', 'iss', ...(expected.state === undefined ? [] : ['state'])].sort());
  assert.equal(fields.get('iss'), expected.issuer);
  assert.equal(fields.get('state'), expected.state);
  const code = fields.get('code')!;
  assert.match(code, /^[A-Za-z0-9_-]{43}$/);
  return code;
}

function assertFormPostError(fields: Map<string, string>, expected: { error: string; state?: string; issuer: string }): void {
  assert.deepEqual([...fields.keys()].sort(), ['error', 'error_description', 'iss', ...(expected.state === undefined ? [] : ['state'])].sort());
  assert.equal(fields.get('error'), expected.error, fields.get('error_description'));
  assert.match(fields.get('error_description') ?? '', ERROR_TEXT);
  assert.equal(fields.get('iss'), expected.issuer);
  assert.equal(fields.get('state'), expected.state);
}

for (const db of DATABASES) {
  describe(`response modes on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    let clientSecret: string;
    let username: string;
    const base = (extra: Record<string, string> = {}) => ({ client_id: client.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', ...extra });
    const get = (params: Record<string, string> | [string, string][], jar?: CookieJar) => browse(authorizationUrl(server.url, params), jar);
    const login = (params: Record<string, string>, jar = new CookieJar()) => loginThroughForm({ baseUrl: server.url, jar }, params, { username, password: PASSWORD });
    /** A browser with a session (logged in by query mode). */
    const signedIn = async () => {
      const jar = new CookieJar();
      assert.equal((await login(base({ state: 'setup' }), jar)).status, 303);
      return jar;
    };
    const redeem = (code: string) =>
      fetch(`${server.url}/uas/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${clientSecret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }),
      });

    before(async () => {
      // Two silent codes per SSO session, so the rate limit's temporarily_unavailable is reachable (RM-02).
      server = await startServer(db, { env: { GATEHOUSE_SILENT_AUTHORIZATIONS_PER_SESSION: '2' } });
      ({ client, clientSecret } = await createTestClient(server.gatehouse.store, { redirectUris: [REDIRECT, 'com.example.app:/cb'] }));
      username = `modes-${Date.now()}`;
      await createTestUser(server.gatehouse.store, { username, password: PASSWORD });
    });
    after(async () => server.close());

    test('form_post after a login: the login form carries the mode, the page posts code, state and iss to the redirect_uri, and the code redeems (RM-01, RM-03)', async () => {
      const loginPage = await (await get(base({ response_mode: 'form_post', state: 'st-1' }))).text();
      assert.deepEqual(formFields(loginPage).find(([name]) => name === 'response_mode'), ['response_mode', 'form_post']);
      const response = await login(base({ response_mode: 'form_post', state: 'st-1' }));
      const code = assertFormPostCode(await assertFormPost(response, REDIRECT), { state: 'st-1', issuer: server.issuer });
      const tokens = await redeem(code);
      assert.equal(tokens.status, 200, await tokens.clone().text());
    });

    test('form_post by single sign-on, prompt=none included: the page, not a redirect (RM-01)', async () => {
      const jar = await signedIn();
      for (const extra of [{}, { prompt: 'none' }] as Record<string, string>[]) {
        const response = await get(base({ response_mode: 'form_post', state: 'st-2', ...extra }), jar);
        assertFormPostCode(await assertFormPost(response, REDIRECT), { state: 'st-2', issuer: server.issuer });
      }
    });

    test('form_post delivers each kind of error after the redirect_uri is verified: request checks, unauthorized_client, prompt=none, the silent rate limit, after the login (RM-02)', async () => {
      const mode = { response_mode: 'form_post', state: 'e' };
      const cases: [string, Record<string, string> | [string, string][], string][] = [
        ['unsupported_response_type', base({ ...mode, response_type: 'token' }), 'unsupported_response_type'],
        ['missing response_type', Object.fromEntries(Object.entries(base(mode)).filter(([name]) => name !== 'response_type')), 'invalid_request'],
        ['repeated parameter', [...Object.entries(base(mode)), ['scope', 'x']], 'invalid_request'],
        ['request object', base({ ...mode, request: 'eyJhbGciOiJub25lIn0.e30.' }), 'request_not_supported'],
        ['malformed scope', base({ ...mode, scope: 'openid "x' }), 'invalid_scope'],
        ['bad code_challenge', base({ ...mode, code_challenge: 'short' }), 'invalid_request'],
        ['prompt=none without a session', base({ ...mode, prompt: 'none' }), 'login_required'],
      ];
      for (const [what, params, error] of cases) {
        const fields = await assertFormPost(await get(params), REDIRECT);
        assertFormPostError(fields, { error, state: 'e', issuer: server.issuer });
        assert.ok(what);
      }
      // A client without the authorization_code grant (RFC 6749 §4.1.2.1).
      const { client: noCodes } = await createTestClient(server.gatehouse.store, { redirectUris: [REDIRECT], grantTypes: ['refresh_token'] });
      assertFormPostError(await assertFormPost(await get(base({ ...mode, client_id: noCodes.clientId })), REDIRECT), { error: 'unauthorized_client', state: 'e', issuer: server.issuer });
      // Single sign-on beyond the session's silent-code budget: temporarily_unavailable.
      const jar = await signedIn();
      for (let i = 0; i < 2; i++) assertFormPostCode(await assertFormPost(await get(base(mode), jar), REDIRECT), { state: 'e', issuer: server.issuer });
      assertFormPostError(await assertFormPost(await get(base(mode), jar), REDIRECT), { error: 'temporarily_unavailable', state: 'e', issuer: server.issuer });
      // After the login: the id_token_hint named someone else (OIDC Core §3.1.2.1).
      const other = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const hint = await signTestIdToken(server.gatehouse.deps, { sub: other.id, aud: client.clientId });
      const afterLogin = await login(base({ ...mode, id_token_hint: hint }));
      assertFormPostError(await assertFormPost(afterLogin, REDIRECT), { error: 'login_required', state: 'e', issuer: server.issuer });
    });

    test('form_post: values reach the page escaped by the template and come back as sent (RM-03)', async () => {
      const state = `"><script>alert(1)</script>&amp;'<`;
      const response = await get(base({ response_mode: 'form_post', state, response_type: 'token' }));
      const html = await response.clone().text();
      assert.ok(!html.includes('<script>alert'), 'the state is escaped');
      assertFormPostError(await assertFormPost(response, REDIRECT), { error: 'unsupported_response_type', state, issuer: server.issuer });
    });

    test('the script file: JavaScript, cached, nosniff; it submits the page’s form (RM-03)', async () => {
      const response = await fetch(`${server.url}/uas/assets/form-post.js`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/javascript; charset=utf-8');
      assert.equal(response.headers.get('cache-control'), 'public, max-age=3600');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.match(await response.text(), /getElementById\('form-post'\)/);
    });

    test('form_post page in the language asked: ui_locales, else Accept-Language (RM-03)', async () => {
      for (const [extra, headers, lang, button] of [
        [{ ui_locales: 'fi' }, {}, 'fi', 'Jatka'],
        [{}, { 'accept-language': 'sv-SE' }, 'sv', 'Fortsätt'],
        [{}, {}, 'en', 'Continue'],
      ] as const) {
        const response = await browse(authorizationUrl(server.url, base({ response_mode: 'form_post', response_type: 'token', ...extra })), undefined, headers);
        const html = await response.text();
        assert.match(html, new RegExp(`<html lang="${lang}">`));
        assert.match(html, new RegExp(`<button type="submit">${button}</button>`));
      }
    });

    test('query, named explicitly: code and errors in the query, as without it (RM-04)', async () => {
      const response = await login(base({ response_mode: 'query', state: 'q' }));
      assert.equal(response.status, 303);
      const location = new URL(response.headers.get('location')!);
      assert.equal(`${location.origin}${location.pathname}`, 'https://rp.example.test/cb');
      assert.equal(location.searchParams.get('tenant'), 'a', 'the registered query is kept');
      assert.match(location.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.equal(location.searchParams.get('state'), 'q');
      assert.equal(location.hash, '');
      assertErrorRedirect(await get(base({ response_mode: 'query', state: 'q', prompt: 'none' })), { redirectUri: REDIRECT, error: 'login_required', state: 'q', issuer: server.issuer });
    });

    test('fragment: code and errors in the fragment, nothing added to the query (RM-05)', async () => {
      const jar = await signedIn();
      const silent = await get(base({ response_mode: 'fragment', state: 'f' }), jar);
      assert.equal(silent.status, 302);
      assert.equal(silent.headers.get('cache-control'), 'no-store');
      const location = silent.headers.get('location')!;
      assert.ok(location.startsWith(`${REDIRECT}#`), location);
      const params = new URLSearchParams(new URL(location).hash.slice(1));
      assert.deepEqual([...params.keys()].sort(), ['code', 'iss', 'state']);
      assert.match(params.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.equal(params.get('iss'), server.issuer);
      const refused = (await get(base({ response_mode: 'fragment', state: 'f', prompt: 'none' }))).headers.get('location')!;
      assert.ok(refused.startsWith(`${REDIRECT}#`), refused);
      const error = new URLSearchParams(new URL(refused).hash.slice(1));
      assert.deepEqual([...error.keys()].sort(), ['error', 'error_description', 'iss', 'state']);
      assert.equal(error.get('error'), 'login_required');
    });

    test('an unknown, repeated or unusable response_mode is invalid_request, sent by query (RM-06)', async () => {
      for (const params of [
        base({ response_mode: 'form_post.jwt', state: 'u' }),
        base({ response_mode: 'jwt', state: 'u' }),
        base({ response_mode: 'FORM_POST', state: 'u' }),
        [...Object.entries(base({ state: 'u' })), ['response_mode', 'form_post'], ['response_mode', 'form_post']] as [string, string][],
        // Only a web server receives a POST: a native app's private-use scheme cannot.
        base({ response_mode: 'form_post', redirect_uri: 'com.example.app:/cb', state: 'u' }),
      ]) {
        const redirectUri = Array.isArray(params) ? REDIRECT : params.redirect_uri;
        const response = await get(params);
        const query = assertErrorRedirect(response, { redirectUri, error: 'invalid_request', state: 'u', issuer: server.issuer });
        assert.match(query.get('error_description') ?? '', /response_mode/);
      }
    });

    test('an unverified redirect_uri is the error page whatever the mode: nothing is posted anywhere (RM-07)', async () => {
      for (const mode of ['form_post', 'fragment']) {
        await assertErrorPage(await get(base({ response_mode: mode, redirect_uri: 'https://evil.example/cb' })), 'invalid_redirect_uri');
        await assertErrorPage(await get(base({ response_mode: mode, client_id: 'no-such-client' })), 'invalid_client');
      }
    });
  });
}
