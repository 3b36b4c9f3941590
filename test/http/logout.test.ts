/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): the browser's session ends, its
 * tokens are revoked, the cookie is cleared, and the browser goes only to a registered
 * post_logout_redirect_uri, or sees the signed-out page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { SsoSession } from '../../src/domain/session.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, loginThroughForm, signTestIdToken, submit } from '../helpers/fixtures.ts';
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

    test('without parameters: the session ends, its tokens are revoked, the cookie is cleared, and a signed-out page shows', async () => {
      const { jar, session } = await signIn();
      const token = await addToken(session);
      const response = await browse(logoutUrl(), jar);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.ok(response.headers.getSetCookie().some((c) => c.startsWith('gatehouse_session=;')));
      assert.match(await response.text(), /You have been signed out\./);
      assert.equal(jar.cookies.get('gatehouse_session'), undefined);
      assert.equal(await server.gatehouse.store.sessions.findLiveByIndex(session.sessionIndex, Date.now()), undefined);
      assert.ok((await server.gatehouse.store.tokens.find(token))?.revokedAt !== undefined);
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

    test('client_id instead of a hint identifies the client too; POST works like GET', async () => {
      const { jar, session } = await signIn();
      const response = await submit(`${server.url}/uas/oauth2/logout`, { client_id: client.clientId, post_logout_redirect_uri: AFTER_LOGOUT }, jar);
      assert.equal(response.status, 302);
      assert.equal(response.headers.get('location'), AFTER_LOGOUT);
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
