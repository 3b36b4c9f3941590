/**
 * `sid` (OpenID Connect Front-Channel Logout 1.0 §3, Back-Channel Logout 1.0 §2.4; issue 26 item
 * 1; decisions LO1–LO2): in every ID token, one value per SSO session and relying party — the same
 * for every ID token a client gets in one session, another for another client or another session —
 * and accepted as `logout_hint` with `client_id` in a logout without an id_token_hint, where it
 * vouches for the request as a hint does. Real sign-ins through the login form, real code exchanges.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, loginThroughForm } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'sid password 1';
const AFTER_LOGOUT = 'https://rp.example.test/logged-out';

for (const db of DATABASES) {
  describe(`sid on ${db.name}`, () => {
    let server: RunningServer;
    let user: User;
    let one: { client: Client; clientSecret: string };
    let two: { client: Client; clientSecret: string };

    before(async () => {
      server = await startServer(db);
      one = await createTestClient(server.gatehouse.store, { postLogoutRedirectUris: [AFTER_LOGOUT] });
      two = await createTestClient(server.gatehouse.store);
      user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    });
    after(async () => server.close());

    const query = (client: Client) => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid' });
    /** The ID token's claims from a code exchange. */
    const exchange = async (location: string | null, { client, clientSecret }: { client: Client; clientSecret: string }) => {
      const code = new URL(location!).searchParams.get('code');
      assert.ok(code, `a code: ${location}`);
      const answer = await postForm(`${server.issuer}/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return decodeJwt(answer.body.id_token as string);
    };
    /** A new browser signed in through `client`: its cookies and the ID token's claims. */
    const signIn = async (client = one) => {
      const jar = new CookieJar();
      const login = await loginThroughForm({ baseUrl: server.url, jar }, query(client.client), { username: user.username, password: PASSWORD });
      assert.equal(login.status, 303);
      return { jar, claims: await exchange(login.headers.get('location'), client) };
    };
    /** A silent authorization of `client` in the browser's SSO session. */
    const again = async (jar: CookieJar, client: { client: Client; clientSecret: string }) => {
      const answer = await browse(`${server.url}/uas/oauth2/authorization?${new URLSearchParams(query(client.client))}`, jar);
      assert.equal(answer.status, 302);
      return exchange(answer.headers.get('location'), client);
    };
    const sessionLives = async (jar: CookieJar) => (await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session') ?? ''), Date.now())) !== undefined;
    const logout = (jar: CookieJar, params: Record<string, string>) => browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams(params)}`, jar);

    test('one sid per SSO session and client: the same in every ID token of a client in one session, another for another client or session', async () => {
      const first = await signIn();
      const sid = first.claims.sid as string;
      assert.match(sid, /^[A-Za-z0-9_-]{43}$/, 'the syntax of a client identifier (§3)');
      assert.equal((await again(first.jar, one)).sid, sid, 'the same client in the same session');
      const other = (await again(first.jar, two)).sid;
      assert.deepEqual([typeof other, other === sid], ['string', false], 'another client in the same session has its own');
      const second = await signIn();
      assert.notEqual(second.claims.sid, sid, 'another session');
      assert.notEqual(second.claims.session_index, first.claims.session_index);
    });

    test('discovery lists sid among the claims', async () => {
      const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as { claims_supported: string[] };
      assert.equal(metadata.claims_supported.filter((name) => name === 'sid').length, 1);
    });

    test('logout_hint = the sid with its client_id: the session ends without the question, and the registered redirect is followed with the state (LO2)', async () => {
      const { jar, claims } = await signIn();
      const answer = await logout(jar, { client_id: one.client.clientId, logout_hint: claims.sid as string, post_logout_redirect_uri: AFTER_LOGOUT, state: 'st' });
      assert.equal(answer.status, 302);
      assert.equal(answer.headers.get('location'), `${AFTER_LOGOUT}?state=st`);
      assert.equal(await sessionLives(jar), false);
    });

    test('a sid that is not this session’s at this client_id vouches for nothing: the question, and the session lives', async () => {
      const { jar, claims } = await signIn();
      const otherClients = (await again(jar, two)).sid as string;
      const otherSession = (await signIn()).claims.sid as string;
      for (const [name, params] of [
        ['another client’s sid', { client_id: one.client.clientId, logout_hint: otherClients }],
        ['the sid under another client_id', { client_id: two.client.clientId, logout_hint: claims.sid as string }],
        ['another session’s sid', { client_id: one.client.clientId, logout_hint: otherSession }],
        ['a sid without client_id', { logout_hint: claims.sid as string }],
      ] as const) {
        // The redirect is registered for `one` only (a redirect unregistered for the client_id is an error page).
        const answer = await logout(jar, { ...params, ...(params.client_id === one.client.clientId ? { post_logout_redirect_uri: AFTER_LOGOUT } : {}) });
        assert.deepEqual([answer.status, answer.headers.get('location')], [200, null], name);
        assert.match(await answer.text(), /name="csrf_token"/, `${name}: the confirmation form`);
        assert.equal(await sessionLives(jar), true, name);
      }
    });

    test('a sid with no session in the browser: the signed-out page, no redirect', async () => {
      const { claims } = await signIn();
      const answer = await logout(new CookieJar(), { client_id: one.client.clientId, logout_hint: claims.sid as string, post_logout_redirect_uri: AFTER_LOGOUT });
      assert.deepEqual([answer.status, answer.headers.get('location')], [200, null]);
      assert.match(await answer.text(), /You have been signed out\./);
    });
  });
}
