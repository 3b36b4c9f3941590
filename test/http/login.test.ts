/**
 * The login page and its form (OIDC Core §3.1.2.3): CSRF, generic failures, re-validation of the
 * carried request, the SSO session cookie, and the code bound to everything it must be.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, loginThroughForm, pkce, submit } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertErrorPage, assertErrorRedirect, assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'correct horse battery staple';

for (const db of DATABASES) {
  describe(`login form on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    let username: string;
    const query = (extra: Record<string, string> = {}) => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid profile', state: 'st-1', ...extra });
    const openForm = async (jar: CookieJar, extra: Record<string, string> = {}) => {
      const html = await assertLoginPage(await browse(authorizationUrl(server.url, query(extra)), jar));
      return { html, fields: formFields(html), action: new URL(formAction(html), server.url).toString() };
    };
    const fill = (fields: [string, string][], values: Record<string, string>) => fields.map(([n, v]): [string, string] => [n, values[n] ?? v]);

    before(async () => {
      server = await startServer(db);
      ({ client } = await createTestClient(server.gatehouse.store));
      username = `alice-${Date.now()}`;
      await createTestUser(server.gatehouse.store, { username, password: PASSWORD });
    });
    after(async () => server.close());

    test('the page has labelled fields, a CSRF field and cookie, a language, and no inline script or style', async () => {
      const jar = new CookieJar();
      const response = await browse(authorizationUrl(server.url, query()), jar);
      assert.match(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
      assert.equal(response.headers.get('x-frame-options'), 'DENY');
      assert.equal(response.headers.get('access-control-allow-origin'), null);
      const csrfCookie = response.headers.getSetCookie().find((c) => c.startsWith('gatehouse_csrf='));
      assert.match(csrfCookie ?? '', /HttpOnly/);
      assert.match(csrfCookie ?? '', /SameSite=Strict/);
      const html = await assertLoginPage(response);
      assert.match(html, /<html lang="en">/);
      assert.match(html, /<label for="username">/);
      assert.match(html, /<label for="password">/);
      assert.match(html, /<input id="username" name="username"/);
      assert.match(html, /<input id="password" name="password" type="password"/);
      // Scripts only as files of our origin (the passkey ceremonies, issue 24), never inline.
      assert.deepEqual([...html.matchAll(/<script\b[^>]*>/gi)].map((m) => m[0]), ['<script src="/uas/assets/webauthn.js" defer>', '<script src="/uas/assets/passkey.js" defer>']);
      assert.doesNotMatch(html, /<script\b[^>]*>[^<]|\sstyle=|\son[a-z]+=/i);
      const csrf = formFields(html).find(([n]) => n === 'csrf_token')?.[1];
      assert.equal(jar.cookies.get('gatehouse_csrf'), csrf);
      const css = await fetch(`${server.url}/uas/assets/login.css`);
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
    });

    test('login_hint pre-fills the username; hostile values are escaped', async () => {
      const { html } = await openForm(new CookieJar(), { login_hint: 'bob"><script>x</script>' });
      assert.ok(html.includes('value="bob&quot;&gt;&lt;script&gt;x&lt;/script&gt;"'));
      assert.ok(!html.includes('<script>x'));
    });

    test('good credentials: a 303 to the client with code, state and iss, and an HttpOnly Lax session cookie', async () => {
      const jar = new CookieJar();
      const { challenge } = pkce();
      const response = await loginThroughForm({ baseUrl: server.url, jar }, query({ nonce: 'n-0S6_WzA2Mj', code_challenge: challenge, code_challenge_method: 'S256' }), { username, password: PASSWORD });
      const code = assertCodeRedirect(response, { redirectUri: client.redirectUris[0]!, state: 'st-1', issuer: server.issuer, status: 303 });
      const cookie = response.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!;
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Lax/);
      assert.match(cookie, /Path=\//);
      assert.doesNotMatch(cookie, /Secure/);

      const session = await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), Date.now());
      assert.ok(session);
      assert.match(session.sessionIndex, /^_[0-9a-f]{40}$/);
      assert.deepEqual(session.amr, ['pwd']);
      assert.equal(session.acr, undefined);
      const redeemed = await server.gatehouse.store.codes.consumeOnce(hashSecret(code), Date.now());
      assert.equal(redeemed.outcome, 'redeemed');
      if (redeemed.outcome !== 'redeemed') return;
      const row = redeemed.code;
      assert.equal(row.clientId, client.clientId);
      assert.equal(row.redirectUri, client.redirectUris[0]);
      assert.equal(row.scope, 'openid profile');
      assert.equal(row.nonce, 'n-0S6_WzA2Mj');
      assert.equal(row.codeChallenge, challenge);
      assert.equal(row.codeChallengeMethod, 'S256');
      assert.equal(row.userId, session.userId);
      assert.equal(row.sessionIndex, session.sessionIndex);
      assert.equal(row.authTime, session.authTime);
      assert.ok(row.expiresAt - row.createdAt === server.config.codeTtl * 1000);
    });

    test('wrong password, unknown user, and users who may not sign in get the same form, message and status', async () => {
      const disabled = await createTestUser(server.gatehouse.store, { password: PASSWORD, status: 'disabled' });
      const locked = await createTestUser(server.gatehouse.store, { password: PASSWORD, status: 'locked' });
      const pending = await createTestUser(server.gatehouse.store, { password: PASSWORD, status: 'pending' });
      const attempts = [
        { username, password: 'wrong' },
        { username: 'nobody-here', password: PASSWORD },
        { username: disabled.username, password: PASSWORD },
        { username: locked.username, password: PASSWORD },
        { username: pending.username, password: PASSWORD },
        { username: 'nul\u0000byte', password: PASSWORD },
      ];
      const messages = new Set<string>();
      for (const attempt of attempts) {
        const jar = new CookieJar();
        const response = await loginThroughForm({ baseUrl: server.url, jar }, query(), attempt);
        const html = await assertLoginPage(response, 401);
        assert.equal(jar.cookies.get('gatehouse_session'), undefined);
        assert.ok(html.includes(`value="${attempt.username}"`), 'the username is kept');
        messages.add(/<p class="message" role="alert"[^>]*>([^<]*)<\/p>/.exec(html)?.[1] ?? '');
      }
      assert.equal(messages.size, 1);
      assert.notEqual([...messages][0], '', 'the message is found on the page');
      assert.ok(![...messages][0]!.includes('exist'));
    });

    test('the error message follows the page language', async () => {
      const response = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, query({ ui_locales: 'fi' }), { username, password: 'nope' });
      const html = await assertLoginPage(response, 401);
      assert.match(html, /<html lang="fi">/);
      assert.ok(html.includes('Käyttäjätunnus tai salasana on väärin'));
    });

    test('a post without the CSRF cookie, or with another token, is refused with no code (AZ-44)', async () => {
      const jar = new CookieJar();
      const { fields, action } = await openForm(jar);
      const noCookie = await submit(action, fill(fields, { username, password: PASSWORD }));
      await assertLoginPage(noCookie, 403);
      const wrongToken = await submit(action, fill(fields, { username, password: PASSWORD, csrf_token: 'x'.repeat(43) }), jar);
      await assertLoginPage(wrongToken, 403);
      assert.equal(jar.cookies.get('gatehouse_session'), undefined);
      // The control: the same form, with its token and cookie, signs in.
      assertCodeRedirect(await submit(action, fill(fields, { username, password: PASSWORD }), jar), { redirectUri: client.redirectUris[0]!, state: 'st-1', issuer: server.issuer, status: 303 });
    });

    test('the carried request is validated again: tampering gains nothing', async () => {
      const jar = new CookieJar();
      const { fields, action } = await openForm(jar);
      const login = { username, password: PASSWORD };
      await assertErrorPage(await submit(action, fill(fields, { ...login, redirect_uri: 'https://evil.example/cb' }), jar), 'invalid_redirect_uri');
      await assertErrorPage(await submit(action, fill(fields, { ...login, client_id: 'someone-else' }), jar), 'invalid_client');
      const tampered = await submit(action, fill(fields, { ...login, response_type: 'token' }), jar);
      assertErrorRedirect(tampered, { redirectUri: client.redirectUris[0]!, error: 'unsupported_response_type', state: 'st-1', issuer: server.issuer });
      const duplicated = await submit(action, [...fill(fields, login), ['scope', 'openid email']], jar);
      assertErrorRedirect(duplicated, { redirectUri: client.redirectUris[0]!, error: 'invalid_request', state: 'st-1', issuer: server.issuer });
      assert.equal(jar.cookies.get('gatehouse_session'), undefined);
      // The control: the form as it came signs in.
      assertCodeRedirect(await submit(action, fill(fields, login), jar), { redirectUri: client.redirectUris[0]!, state: 'st-1', issuer: server.issuer, status: 303 });
    });

    test('a PKCE-requiring client cannot have its challenge stripped from the form', async () => {
      const { client: publicClient } = await createTestClient(server.gatehouse.store, { tokenEndpointAuthMethod: 'none', grantTypes: ['authorization_code'] });
      const jar = new CookieJar();
      const html = await assertLoginPage(await browse(authorizationUrl(server.url, { ...query(), client_id: publicClient.clientId, code_challenge: pkce().challenge, code_challenge_method: 'S256' }), jar));
      const stripped = formFields(html).filter(([n]) => n !== 'code_challenge' && n !== 'code_challenge_method');
      const response = await submit(new URL(formAction(html), server.url).toString(), fill(stripped, { username, password: PASSWORD }), jar);
      assertErrorRedirect(response, { redirectUri: publicClient.redirectUris[0]!, error: 'invalid_request', state: 'st-1', issuer: server.issuer });
    });

    test('a state of 128 characters with -._~ comes back byte for byte with the code (AZ-07)', async () => {
      const state = '-._~AZaz09'.repeat(12).slice(0, 128);
      const response = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, query({ state }), { username, password: PASSWORD });
      assertCodeRedirect(response, { redirectUri: client.redirectUris[0]!, state, issuer: server.issuer, status: 303 });
      assert.ok(response.headers.get('location')!.includes(`state=${state}&`), 'not even percent-encoded');
    });

    test('a login while another session cookie exists replaces that session', async () => {
      const jar = new CookieJar();
      await loginThroughForm({ baseUrl: server.url, jar }, query(), { username, password: PASSWORD });
      const first = jar.cookies.get('gatehouse_session')!;
      await loginThroughForm({ baseUrl: server.url, jar }, query({ prompt: 'login' }), { username, password: PASSWORD });
      const second = jar.cookies.get('gatehouse_session')!;
      assert.notEqual(first, second);
      assert.equal(await server.gatehouse.store.sessions.findLive(hashSecret(first), Date.now()), undefined);
      assert.ok(await server.gatehouse.store.sessions.findLive(hashSecret(second), Date.now()));
    });
  });
}
