/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): the browser's session ends, its
 * tokens are revoked, the cookie is cleared, and the browser goes only to a registered
 * post_logout_redirect_uri, or sees the signed-out page. Without a valid id_token_hint the user
 * confirms first, on a page whose form carries a CSRF token (finding 9 of issue 10).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { SsoSession } from '../../src/domain/session.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, formAction, formFields, loginThroughForm, logoutConfirmed, signTestIdToken, submit } from '../helpers/fixtures.ts';
import { assertErrorPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'logout pw 1';
const AFTER_LOGOUT = 'https://rp.example.test/logged-out?from=gatehouse';

for (const db of DATABASES) {
  describe(`RP-initiated logout on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    let user: User;
    const logoutUrl = (params: Record<string, string> = {}) => `${server.url}/uas/oauth2/logout?${new URLSearchParams(params)}`;
    const liveSession = (jar: CookieJar) => server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session') ?? ''), Date.now());
    const signIn = async (who: User = user): Promise<{ jar: CookieJar; session: SsoSession; hint: string }> => {
      const jar = new CookieJar();
      await loginThroughForm({ baseUrl: server.url, jar }, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid' }, { username: who.username, password: PASSWORD });
      const session = (await liveSession(jar))!;
      const hint = await signTestIdToken(server.gatehouse.deps, { sub: who.id, aud: client.clientId, azp: client.clientId, session_index: session.sessionIndex });
      return { jar, session, hint };
    };
    const addToken = async (session: SsoSession) => {
      const tokenHash = hashSecret(`token-${Math.random()}`);
      const now = Date.now();
      await server.gatehouse.store.tokens.insert({ tokenHash, kind: 'access_token', clientId: client.clientId, userId: session.userId, scope: 'openid', sessionIndex: session.sessionIndex, authTime: session.authTime, amr: ['pwd'], acr: undefined, codeHash: undefined, familyId: tokenHash, createdAt: now, expiresAt: now + 3_600_000, revokedAt: undefined, rotatedAt: undefined });
      return tokenHash;
    };

    before(async () => {
      server = await startServer(db);
      ({ client } = await createTestClient(server.gatehouse.store, { postLogoutRedirectUris: [AFTER_LOGOUT] }));
      user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    });
    after(async () => server.close());

    /** The session, and the token issued in it, are both still live. */
    const assertLive = async (session: SsoSession, token: string, context: string) => {
      assert.ok(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()), `${context}: the session lives`);
      assert.equal((await server.gatehouse.store.tokens.find(token))?.revokedAt, undefined, `${context}: the token lives`);
    };
    const assertEnded = async (session: SsoSession, token: string) => {
      assert.equal(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()), undefined);
      assert.ok((await server.gatehouse.store.tokens.find(token))?.revokedAt !== undefined);
    };
    /** The confirmation page: its form posts back here with the CSRF token, which equals the cookie. */
    const assertConfirmation = async (response: Response, jar: CookieJar, status = 200) => {
      assert.equal(response.status, status);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.headers.get('location'), null);
      assert.ok(!response.headers.getSetCookie().some((c) => c.startsWith('gatehouse_session=')), 'the session cookie is left alone');
      const html = await response.text();
      assert.equal(formAction(html), '/uas/oauth2/logout');
      const token = formFields(html).filter(([name]) => name === 'csrf_token');
      assert.equal(token.length, 1);
      assert.equal(token[0]![1], jar.cookies.get('gatehouse_csrf'));
      return html;
    };

    test('a cross-site GET without id_token_hint ends nothing: the confirmation page asks first (finding 9; RP-Initiated Logout §2)', async () => {
      const { jar, session } = await signIn();
      const token = await addToken(session);
      jar.cookies.delete('gatehouse_csrf'); // SameSite=Strict: a cross-site request does not carry it
      const html = await assertConfirmation(await browse(logoutUrl(), jar), jar);
      assert.match(html, /<h1>Sign out<\/h1>/);
      assert.match(html, /<button type="submit">Sign out<\/button>/);
      await assertLive(session, token, 'GET');
      assert.ok(jar.cookies.get('gatehouse_session'));
    });

    test('HEAD changes nothing, with or without a valid id_token_hint (finding 9)', async () => {
      const { jar, session, hint } = await signIn();
      const token = await addToken(session);
      for (const params of [{}, { id_token_hint: hint }, { id_token_hint: hint, post_logout_redirect_uri: AFTER_LOGOUT, state: 's' }] as Record<string, string>[]) {
        const response = await fetch(logoutUrl(params), { method: 'HEAD', redirect: 'manual', headers: jar.header() });
        assert.equal(response.status, 200, JSON.stringify(params));
        assert.deepEqual(response.headers.getSetCookie(), []);
        await assertLive(session, token, `HEAD ${Object.keys(params).join(',')}`);
      }
      const bad = await fetch(logoutUrl({ id_token_hint: 'not.a.jwt' }), { method: 'HEAD', redirect: 'manual', headers: jar.header() });
      assert.equal(bad.status, 400);
      await assertLive(session, token, 'HEAD with a bad hint');
    });

    test('a POST without the CSRF token, or with a wrong one, changes nothing (finding 9)', async () => {
      const { jar, session } = await signIn();
      const token = await addToken(session);
      // A relying party's (or an attacker's) form without our token: the question again, 200.
      await assertConfirmation(await submit(`${server.url}/uas/oauth2/logout`, {}, jar), jar);
      await assertLive(session, token, 'no token');
      const realToken = jar.cookies.get('gatehouse_csrf')!;
      // A token that is not the cookie's, and the right token without the cookie (a cross-site post).
      const withoutCookie = new CookieJar();
      withoutCookie.cookies.set('gatehouse_session', jar.cookies.get('gatehouse_session')!);
      for (const [name, form, from] of [['wrong token', { csrf_token: 'x'.repeat(43) }, jar], ['cross-site', { csrf_token: realToken }, withoutCookie], ['empty', { csrf_token: '' }, jar]] as const) {
        const html = await assertConfirmation(await submit(`${server.url}/uas/oauth2/logout`, form, from), from, 403);
        assert.match(html, /The form expired\. Please confirm again\./, name);
        await assertLive(session, token, name);
      }
    });

    test('confirming with the right CSRF token ends the session, revokes its tokens, clears the cookie and shows the signed-out page (finding 9)', async () => {
      const { jar, session } = await signIn();
      const token = await addToken(session);
      const response = await logoutConfirmed(server.url, jar);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.ok(response.headers.getSetCookie().some((c) => c.startsWith('gatehouse_session=;')));
      assert.match(await response.text(), /You have been signed out\./);
      assert.equal(jar.cookies.get('gatehouse_session'), undefined);
      await assertEnded(session, token);
    });

    test('the confirmation page is localized, and its language is carried to the signed-out page', async () => {
      const { jar, session } = await signIn();
      const fi = await (await browse(logoutUrl({ ui_locales: 'fi' }), jar)).text();
      assert.match(fi, /<html lang="fi">/);
      assert.match(fi, /<button type="submit">Kirjaudu ulos<\/button>/);
      assert.match(await (await browse(logoutUrl(), jar, { 'accept-language': 'sv' })).text(), /<button type="submit">Logga ut<\/button>/);
      const done = await logoutConfirmed(server.url, jar, { ui_locales: 'fi' });
      assert.match(await done.text(), /Olet kirjautunut ulos\./);
      assert.equal(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()), undefined);
    });

    test('a valid id_token_hint logs out at once, without the question', async () => {
      const { jar, session, hint } = await signIn();
      const token = await addToken(session);
      const response = await browse(logoutUrl({ id_token_hint: hint }), jar);
      assert.equal(response.status, 200);
      assert.match(await response.text(), /You have been signed out\./);
      await assertEnded(session, token);
    });

    test('the signed-out page is localized', async () => {
      const html = await (await browse(logoutUrl({ ui_locales: 'fi' }))).text();
      assert.match(html, /<html lang="fi">/);
      assert.match(html, /Olet kirjautunut ulos\./);
      assert.match(await (await browse(logoutUrl(), undefined, { 'accept-language': 'sv' })).text(), /Du har loggats ut\./);
    });

    test('with id_token_hint and a registered post_logout_redirect_uri: a redirect keeping its query, with the state', async () => {
      const { jar, session, hint } = await signIn();
      const state = 'Az09-._~'.repeat(16);
      const response = await browse(logoutUrl({ id_token_hint: hint, post_logout_redirect_uri: AFTER_LOGOUT, state }), jar);
      assert.equal(response.status, 302);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      const location = new URL(response.headers.get('location')!);
      assert.equal(`${location.origin}${location.pathname}`, 'https://rp.example.test/logged-out');
      assert.equal(location.searchParams.get('from'), 'gatehouse');
      assert.equal(location.searchParams.get('state'), state);
      assert.equal(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()), undefined);
    });

    test('client_id and a registered post_logout_redirect_uri without a hint: the question first, then the signed-out page and no redirect (RP-Initiated Logout §3)', async () => {
      const { jar, session } = await signIn();
      const params = { client_id: client.clientId, post_logout_redirect_uri: AFTER_LOGOUT, state: 's' };
      await assertConfirmation(await submit(`${server.url}/uas/oauth2/logout`, params, jar), jar);
      assert.ok(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()));
      const response = await logoutConfirmed(server.url, jar, params);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('location'), null);
      assert.match(await response.text(), /You have been signed out\./);
      assert.equal(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()), undefined);
    });

    test('an expired id_token_hint is still accepted', async () => {
      const { jar, session } = await signIn();
      const expired = await signTestIdToken(server.gatehouse.deps, { sub: user.id, aud: client.clientId, expiresIn: -3600 });
      const response = await browse(logoutUrl({ id_token_hint: expired, post_logout_redirect_uri: AFTER_LOGOUT }), jar);
      assert.equal(response.status, 302);
      assert.equal(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()), undefined);
    });

    test('an unregistered post_logout_redirect_uri: the error page, no redirect, and the session lives on', async () => {
      const { jar, session, hint } = await signIn();
      const { client: other } = await createTestClient(server.gatehouse.store, { postLogoutRedirectUris: ['https://other.example.test/bye'] });
      for (const uri of [`${AFTER_LOGOUT}&x=1`, 'https://rp.example.test/logged-out', 'https://evil.example/bye', 'javascript:alert(1)', 'https://other.example.test/bye', `${AFTER_LOGOUT}#f`]) {
        await assertErrorPage(await browse(logoutUrl({ id_token_hint: hint, post_logout_redirect_uri: uri }), jar), 'invalid_request');
      }
      await assertErrorPage(await browse(logoutUrl({ post_logout_redirect_uri: AFTER_LOGOUT }), jar), 'invalid_request');
      await assertErrorPage(await browse(logoutUrl({ client_id: other.clientId, id_token_hint: hint, post_logout_redirect_uri: 'https://other.example.test/bye' }), jar), 'invalid_request');
      await assertErrorPage(await browse(logoutUrl({ client_id: 'unknown', post_logout_redirect_uri: AFTER_LOGOUT }), jar), 'invalid_request');
      await assertErrorPage(await browse(logoutUrl({ id_token_hint: 'not.a.jwt', post_logout_redirect_uri: AFTER_LOGOUT }), jar), 'invalid_request');
      await assertErrorPage(await browse(logoutUrl({ id_token_hint: hint, state: 'a', post_logout_redirect_uri: AFTER_LOGOUT }).concat('&state=b'), jar), 'invalid_request');
      assert.ok(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()));
    });

    test('a hint from an earlier session of the same user ends the browser’s current session', async () => {
      const { hint } = await signIn();
      const { jar, session } = await signIn();
      const response = await browse(logoutUrl({ id_token_hint: hint }), jar);
      assert.equal(response.status, 200);
      assert.equal(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()), undefined);
    });

    test('a hint naming another user leaves the browser’s session and cookie alone', async () => {
      const { jar, session } = await signIn();
      const other = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const { hint: othersHint } = await signIn(other);
      const response = await browse(logoutUrl({ id_token_hint: othersHint, post_logout_redirect_uri: AFTER_LOGOUT }), jar);
      assert.equal(response.status, 302);
      assert.ok(!response.headers.getSetCookie().some((c) => c.startsWith('gatehouse_session=')));
      assert.ok(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()));
    });

    test('hostile input never produces a 5xx', async () => {
      await assertErrorPage(await browse(logoutUrl({ client_id: 'a\u0000b', post_logout_redirect_uri: AFTER_LOGOUT })), 'invalid_request');
      for (const value of ['%', '\u0000', '<script>', 'a'.repeat(9000), 'javascript:alert(1)']) {
        for (const name of ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'ui_locales']) {
          const response = await browse(logoutUrl({ [name]: value }));
          assert.ok(response.status < 500, `${name} gave ${response.status}`);
          await response.body?.cancel();
        }
      }
    });
  });
}
