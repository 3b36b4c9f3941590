/**
 * Conformance: the refresh_token grant (RFC 6749 §6, OIDC Core §12; research/conformance.md
 * §2.12 RT-*) with the OIDF oidcc-refresh-token module. Time moves on a ManualClock.
 * docs/conformance.md maps the rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestClient, createTestUser, logoutConfirmed } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { assertTokenResponse, authorize, clockAtNow, codeRequest, CookieJar, redeem, userInfo, type Credentials } from './helpers.ts';

const PASSWORD = 'conformance refresh 1';

for (const db of DATABASES) {
  describe(`conformance: refresh tokens on ${db.name}`, () => {
    const clock = clockAtNow();
    let server: RunningServer;
    let one: { client: Client; clientSecret: string };
    let two: { client: Client; clientSecret: string };
    let user: User;
    let credentials: Credentials;
    const refresh = (rp: { client: Client; clientSecret: string }, refreshToken: string, extra: Record<string, string> = {}, headers: Record<string, string> = { authorization: basic(rp.client.clientId, rp.clientSecret) }) =>
      postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra }, headers);
    const introspect = (token: string) => postForm(`${server.url}/uas/oauth2/introspection`, { token }, { authorization: basic(one.client.clientId, one.clientSecret) });
    /** Logs in (or uses the jar's session) and redeems a code of `rp` for tokens with a refresh token. */
    const tokens = async (rp: { client: Client; clientSecret: string }, jar = new CookieJar(), scope = 'openid profile email') => {
      const { code } = await authorize(server, jar, codeRequest(rp.client, { scope }), credentials);
      const body = assertTokenResponse(await redeem(server, rp.client, rp.clientSecret, code));
      assert.equal(typeof body.refresh_token, 'string');
      return body;
    };

    before(async () => {
      server = await startServer(db, { clock });
      one = await createTestClient(server.gatehouse.store, { refreshTokens: true });
      two = await createTestClient(server.gatehouse.store, { refreshTokens: true, redirectUris: ['https://two.example.test/cb'] });
      user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      credentials = { username: user.username, password: PASSWORD };
    });
    after(async () => server.close());

    test("oidcc-refresh-token: a refresh with the original scope is a no-store Bearer response; the refresh token is 256 bits of printable ASCII; client 1 presenting client 2's refresh token is invalid_grant (module 37; RT-01..03, RT-05, RT-08)", async () => {
      const jar = new CookieJar();
      const first = await tokens(one, jar);
      const second = await tokens(two, jar);
      for (const body of [first, second]) assert.match(body.refresh_token as string, /^[A-Za-z0-9_-]{43}$/);
      assert.notEqual(first.refresh_token, second.refresh_token);

      const refreshed = assertTokenResponse(await refresh(one, first.refresh_token as string, { scope: 'openid profile email' }));
      assert.equal(refreshed.scope, 'openid profile email');
      assert.notEqual(refreshed.access_token, first.access_token);
      assert.equal(refreshed.id_token, undefined, 'no ID token on refresh (the spec), so nothing to compare (RT-08)');
      assert.equal((await userInfo(server, refreshed.access_token as string)).body.sub, user.id);

      const crossed = await refresh(one, second.refresh_token as string);
      assert.equal(crossed.status, 400);
      assert.match(crossed.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(crossed.body.error, 'invalid_grant');
      assert.equal(crossed.body.access_token, undefined);
    });

    test('a confidential client must authenticate to refresh: no credentials or a wrong secret is 401 invalid_client with a challenge, and the token stays usable (RT-06)', async () => {
      const body = await tokens(one);
      const anonymous = await refresh(one, body.refresh_token as string, {}, {});
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.error, 'invalid_client');
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Basic /);
      const withClientId = await refresh(one, body.refresh_token as string, { client_id: one.client.clientId }, {});
      assert.equal(withClientId.status, 401);
      const wrong = await refresh(one, body.refresh_token as string, {}, { authorization: basic(one.client.clientId, `${one.clientSecret}x`) });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error, 'invalid_client');
      assertTokenResponse(await refresh(one, body.refresh_token as string));
    });

    test('RP-initiated logout revokes the refresh tokens issued in the session (RT-10)', async () => {
      const jar = new CookieJar();
      const body = await tokens(one, jar);
      assert.equal((await introspect(body.refresh_token as string)).body.active, true);
      const logout = await logoutConfirmed(server.url, jar);
      assert.equal(logout.status, 200);
      assert.equal(jar.cookies.get('gatehouse_session'), undefined);
      const after = await refresh(one, body.refresh_token as string);
      assert.equal(after.status, 400);
      assert.equal(after.body.error, 'invalid_grant');
      assert.deepEqual((await introspect(body.refresh_token as string)).body, { active: false });
    });

    // Last: it moves the shared clock by the refresh token lifetime.
    test('a refresh token expires GATEHOUSE_REFRESH_TOKEN_TTL after its issue: invalid_grant, and introspection says {"active":false} (RT-07, RT-10, INT-04)', async () => {
      const body = await tokens(one);
      const lifetime = server.config.refreshTokenTtl * 1000;
      assert.ok(lifetime > 0);
      clock.advance(lifetime - 1000);
      assertTokenResponse(await refresh(one, body.refresh_token as string));
      clock.advance(1000);
      const expired = await refresh(one, body.refresh_token as string);
      assert.equal(expired.status, 400);
      assert.equal(expired.body.error, 'invalid_grant');
      assert.deepEqual((await introspect(body.refresh_token as string)).body, { active: false });
    });
  });
}
