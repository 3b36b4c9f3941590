/**
 * Single sign-on with the session cookie (OIDC Core §3.1.2.1, §3.1.2.3): silent codes for a
 * second client, prompt, max_age and id_token_hint, and the session's idle and absolute
 * deadlines. Time moves on an injected clock; nothing sleeps.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, loginThroughForm, signTestIdToken } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertErrorRedirect, assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'sso password 1';
const MINUTE = 60_000;

for (const db of DATABASES) {
  describe(`SSO session on ${db.name}`, () => {
    const clock = new ManualClock();
    let server: RunningServer;
    let first: Client;
    let second: Client;
    let user: User;
    const query = (client: Client, extra: Record<string, string> = {}) => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's', ...extra });
    const authorizeWith = (jar: CookieJar, client: Client, extra: Record<string, string> = {}) => browse(authorizationUrl(server.url, query(client, extra)), jar);
    const codeRow = async (code: string) => {
      const redemption = await server.gatehouse.store.codes.consumeOnce(hashSecret(code), clock.now());
      assert.equal(redemption.outcome, 'redeemed');
      return redemption.outcome === 'redeemed' ? redemption.code : assert.fail();
    };
    const signIn = async (jar = new CookieJar(), extra: Record<string, string> = {}) => {
      const response = await loginThroughForm({ baseUrl: server.url, jar }, query(first, extra), { username: user.username, password: PASSWORD });
      return { jar, row: await codeRow(assertCodeRedirect(response, { redirectUri: first.redirectUris[0]!, state: 's', issuer: server.issuer, status: 303 })) };
    };
    const silent = async (jar: CookieJar, client: Client, extra: Record<string, string> = {}) => {
      const response = await authorizeWith(jar, client, extra);
      return codeRow(assertCodeRedirect(response, { redirectUri: client.redirectUris[0]!, state: 's', issuer: server.issuer }));
    };
    const session = (jar: CookieJar) => server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session') ?? ''), clock.now());

    before(async () => {
      server = await startServer(db, { clock });
      ({ client: first } = await createTestClient(server.gatehouse.store));
      ({ client: second } = await createTestClient(server.gatehouse.store, { redirectUris: ['https://second.example.test/cb'] }));
      user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    });
    after(async () => server.close());

    test('a second client in the same browser gets a code without the login page: same user, session and auth_time', async () => {
      const { jar, row } = await signIn();
      clock.advance(MINUTE);
      const other = await silent(jar, second);
      assert.equal(other.clientId, second.clientId);
      assert.equal(other.redirectUri, 'https://second.example.test/cb');
      assert.equal(other.userId, row.userId);
      assert.equal(other.sessionIndex, row.sessionIndex);
      assert.equal(other.authTime, row.authTime);
    });

    test('using the session extends its idle deadline; an idle session expires', async () => {
      const { jar } = await signIn();
      const before = (await session(jar))!;
      assert.equal(before.expiresAt, clock.now() + server.config.sessionIdleTtl * 1000);
      clock.advance(30 * MINUTE);
      await silent(jar, second);
      const touched = (await session(jar))!;
      assert.equal(touched.expiresAt, clock.now() + server.config.sessionIdleTtl * 1000);
      clock.advance(server.config.sessionIdleTtl * 1000 + 1);
      await assertLoginPage(await authorizeWith(jar, second));
      assertErrorRedirect(await authorizeWith(jar, second, { prompt: 'none' }), { redirectUri: second.redirectUris[0]!, error: 'login_required', state: 's', issuer: server.issuer });
    });

    test('uses within a sixtieth of the idle timeout of the last extension leave the deadline where it is', async () => {
      const { jar } = await signIn();
      const step = (server.config.sessionIdleTtl * 1000) / 60;
      const before = (await session(jar))!;
      clock.advance(step - 1);
      await silent(jar, second);
      assert.equal((await session(jar))!.expiresAt, before.expiresAt, 'not moved: less than a step');
      clock.advance(1);
      await silent(jar, second);
      assert.equal((await session(jar))!.expiresAt, clock.now() + server.config.sessionIdleTtl * 1000, 'moved: a whole step');
    });

    test('however active, a session ends at its absolute deadline', async () => {
      const { jar } = await signIn();
      const step = (server.config.sessionIdleTtl * 1000) / 2;
      for (let used = 0; used + step < server.config.sessionMaxTtl * 1000; used += step) {
        clock.advance(step);
        await silent(jar, second);
      }
      clock.advance(step);
      await assertLoginPage(await authorizeWith(jar, second));
    });

    test('prompt=none with a session answers silently (AZ-30); prompt=login shows the form and a new auth_time (AZ-31)', async () => {
      const { jar, row } = await signIn();
      clock.advance(MINUTE);
      assert.equal((await silent(jar, second, { prompt: 'none' })).authTime, row.authTime);
      for (const prompt of ['login', 'consent', 'select_account']) await assertLoginPage(await authorizeWith(jar, second, { prompt }));
      clock.advance(MINUTE);
      const again = await signIn(jar, { prompt: 'login' });
      assert.ok(again.row.authTime > row.authTime);
    });

    test('max_age: within it, silent with the original auth_time; beyond it or 0, the login page; with prompt=none, login_required (AZ-33..35)', async () => {
      const { jar, row } = await signIn();
      clock.advance(10 * MINUTE);
      assert.equal((await silent(jar, second, { max_age: '3600' })).authTime, row.authTime);
      await assertLoginPage(await authorizeWith(jar, second, { max_age: '300' }));
      await assertLoginPage(await authorizeWith(jar, second, { max_age: '0' }));
      assertErrorRedirect(await authorizeWith(jar, second, { max_age: '300', prompt: 'none' }), { redirectUri: second.redirectUris[0]!, error: 'login_required', state: 's', issuer: server.issuer });
      const fresh = await signIn(jar, { max_age: '300' });
      assert.equal(fresh.row.authTime, clock.now());
    });

    test('a user disabled after signing in loses single sign-on at once', async () => {
      const victim = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      await loginThroughForm({ baseUrl: server.url, jar }, query(first), { username: victim.username, password: PASSWORD });
      await silent(jar, second);
      await server.gatehouse.store.users.update({ ...victim, status: 'disabled' });
      await assertLoginPage(await authorizeWith(jar, second));
    });

    test('id_token_hint: the session’s own user answers silently; another user’s is login_required under prompt=none (AZ-36)', async () => {
      const { jar } = await signIn();
      const own = await signTestIdToken(server.gatehouse.deps, { sub: user.id, aud: first.clientId, expiresIn: -60 });
      await silent(jar, second, { prompt: 'none', id_token_hint: own });
      const someoneElse = await signTestIdToken(server.gatehouse.deps, { sub: 'another-user', aud: first.clientId });
      assertErrorRedirect(await authorizeWith(jar, second, { prompt: 'none', id_token_hint: someoneElse }), { redirectUri: second.redirectUris[0]!, error: 'login_required', state: 's', issuer: server.issuer });
      await assertLoginPage(await authorizeWith(jar, second, { id_token_hint: someoneElse }));
    });

    test('id_token_hint names one user, another signs in at the form: login_required to the client, no code, no new session (finding 12 a; OIDC Core §3.1.2.1)', async () => {
      const hinted = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const hint = await signTestIdToken(server.gatehouse.deps, { sub: hinted.id, aud: first.clientId });
      const codesOf = async (userId: string) =>
        Number((await (server.gatehouse.store as SqlStore).database.db.selectFrom('authorization_codes').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()).n);

      // A browser without a session, and one signed in as `user` (the hint names someone else).
      const { jar: signedIn } = await signIn();
      const was = await session(signedIn);
      for (const jar of [new CookieJar(), signedIn]) {
        const cookie = jar.cookies.get('gatehouse_session');
        const codes = await codesOf(user.id);
        const response = await loginThroughForm({ baseUrl: server.url, jar }, query(first, { id_token_hint: hint }), { username: user.username, password: PASSWORD });
        assertErrorRedirect(response, { redirectUri: first.redirectUris[0]!, error: 'login_required', state: 's', issuer: server.issuer });
        assert.equal(await codesOf(user.id), codes, 'no code was issued');
        assert.equal(jar.cookies.get('gatehouse_session'), cookie, 'no session was started, none replaced');
      }
      assert.deepEqual(await session(signedIn), was, 'the browser’s session lives on unchanged');
      // The user the hint names signs in as usual.
      const jar = new CookieJar();
      const response = await loginThroughForm({ baseUrl: server.url, jar }, query(first, { id_token_hint: hint }), { username: hinted.username, password: PASSWORD });
      assert.equal((await codeRow(assertCodeRedirect(response, { redirectUri: first.redirectUris[0]!, state: 's', issuer: server.issuer, status: 303 }))).userId, hinted.id);
    });

    test('a forged or unknown session cookie is no session: a well-formed one is looked up and not found, a malformed one is refused unread; the sessions are intact after', async () => {
      const { jar: signedIn } = await signIn();
      const noSession = async (value: string) => {
        const jar = new CookieJar();
        jar.cookies.set('gatehouse_session', value);
        await assertLoginPage(await authorizeWith(jar, second));
        assertErrorRedirect(await authorizeWith(jar, second, { prompt: 'none' }), { redirectUri: second.redirectUris[0]!, error: 'login_required', state: 's', issuer: server.issuer });
      };
      // The shape of a real cookie (43 base64url characters), so each reaches the store's lookup, by its hash.
      for (const value of ['A'.repeat(43), randomBytes(32).toString('base64url'), 'OR_1-1--DROP_TABLE_sessions--SELECT_x-FROM_y'.slice(0, 43)]) await noSession(value);
      // Anything else is no session before any lookup.
      for (const value of ['"; DROP TABLE sessions; --', "' OR '1'='1", 'A'.repeat(44), `${'A'.repeat(42)}=`]) await noSession(value);
      // The real session still signs in silently, and the table still holds it.
      await silent(signedIn, second);
      assert.ok(await session(signedIn));
    });
  });

  describe(`configured acr and secure cookies on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_ACR: 'urn:gatehouse:ac:password', GATEHOUSE_SECURE_COOKIES: 'true' } });
    });
    after(async () => server.close());

    test('the acr is recorded on the session and the code, and published; cookies get __Host- and Secure', async () => {
      const { client } = await createTestClient(server.gatehouse.store);
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      const response = await loginThroughForm({ baseUrl: server.url, jar }, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', acr_values: 'urn:other urn:gatehouse:ac:password' }, { username: user.username, password: PASSWORD });
      const code = assertCodeRedirect(response, { redirectUri: client.redirectUris[0]!, issuer: server.issuer, status: 303 });
      const cookie = response.headers.getSetCookie().find((c) => c.startsWith('__Host-gatehouse_session='));
      assert.match(cookie ?? '', /; Secure/);
      assert.match(cookie ?? '', /Path=\//);
      const redemption = await server.gatehouse.store.codes.consumeOnce(hashSecret(code), Date.now());
      assert.equal(redemption.outcome === 'redeemed' && redemption.code.acr, 'urn:gatehouse:ac:password');
      const metadata = (await (await fetch(`${server.url}/uas/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.deepEqual(metadata.acr_values_supported, ['urn:gatehouse:ac:password']);
    });
  });
}
