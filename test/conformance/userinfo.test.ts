/**
 * Conformance: UserInfo (OIDC Core §5.3-5.4, RFC 6750; research/conformance.md §2.13 UI-*) with
 * the OIDF scope modules, over tokens from the real login. Time moves on a ManualClock.
 * docs/conformance.md maps the rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { assertTokenResponse, authorize, clockAtNow, codeRequest, CookieJar, redeem, userInfo, verifyIdToken, type Credentials } from './helpers.ts';

const PASSWORD = 'conformance userinfo 1';
const TOKEN_CLAIMS = ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'amr', 'session_index'];

for (const db of DATABASES) {
  describe(`conformance: UserInfo on ${db.name}`, () => {
    const clock = clockAtNow();
    let server: RunningServer;
    let client: Client;
    let secret: string;
    let user: User;
    let credentials: Credentials;
    let jar: CookieJar;
    const tokensFor = async (scope: string, who: { jar: CookieJar; credentials: Credentials } = { jar, credentials }) => {
      const { code } = await authorize(server, who.jar, codeRequest(client, { scope }), who.credentials);
      return assertTokenResponse(await redeem(server, client, secret, code));
    };

    before(async () => {
      server = await startServer(db, { clock });
      ({ client, clientSecret: secret } = await createTestClient(server.gatehouse.store));
      user = await createTestUser(server.gatehouse.store, { password: PASSWORD, givenName: 'Katherine', familyName: 'Johnson', email: 'katherine@example.test' });
      credentials = { username: user.username, password: PASSWORD };
      jar = new CookieJar();
      await authorize(server, jar, codeRequest(client), credentials, { expectLogin: true });
    });
    after(async () => server.close());

    test('oidcc-scope-profile, -email and -all: UserInfo releases exactly the claims of the granted scopes, well-typed; address and phone are dropped from the grant (modules 9-13; UI-04..06, DISC-07)', async () => {
      const profile = await tokensFor('openid profile');
      const p = (await userInfo(server, profile.access_token as string)).body;
      assert.deepEqual(Object.keys(p).sort(), [...TOKEN_CLAIMS, 'name', 'given_name', 'family_name', 'preferred_username', 'updated_at'].sort());
      assert.equal(p.name, 'Katherine Johnson');
      assert.equal(p.given_name, 'Katherine');
      assert.equal(p.family_name, 'Johnson');
      assert.equal(p.preferred_username, user.username);
      assert.ok(Number.isInteger(p.updated_at));

      const email = await tokensFor('openid email');
      const e = (await userInfo(server, email.access_token as string)).body;
      assert.deepEqual(Object.keys(e).sort(), [...TOKEN_CLAIMS, 'email', 'email_verified'].sort());
      assert.equal(e.email, 'katherine@example.test');

      const all = await tokensFor('openid email phone address profile');
      assert.equal(all.scope, 'openid email profile');
      const a = (await userInfo(server, all.access_token as string)).body;
      for (const claim of ['name', 'email', 'updated_at']) assert.ok(claim in a, claim);
      for (const claim of ['address', 'phone_number', 'phone_number_verified']) assert.equal(a[claim], undefined, claim);
      const { payload } = await verifyIdToken(server, all.id_token as string);
      assert.equal(a.sub, payload.sub, 'UserInfo sub = ID token sub (UI-04)');
    });

    test('claims the user has no value for are left out, never null or empty (UI-05)', async () => {
      const bare = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const body = await tokensFor('openid profile email', { jar: new CookieJar(), credentials: { username: bare.username, password: PASSWORD } });
      const claims = (await userInfo(server, body.access_token as string)).body;
      for (const claim of ['name', 'given_name', 'family_name', 'email']) assert.equal(claim in claims, false, claim);
      for (const [name, value] of Object.entries(claims)) assert.ok(value !== null && value !== '', `${name} is ${JSON.stringify(value)}`);
      assert.equal(claims.preferred_username, bare.username);
    });

    test('the access token is not read from the query string: 401 with a bare Bearer challenge (UI-03, decision 16)', async () => {
      const body = await tokensFor('openid');
      const response = await fetch(`${server.url}/uas/oauth2/userinfo?access_token=${body.access_token as string}`);
      assert.equal(response.status, 401);
      const challenge = response.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /^Bearer /);
      assert.doesNotMatch(challenge, /error=/);
      assert.equal(((await response.json()) as Record<string, unknown>).sub, undefined);
    });

    // Last: it moves the shared clock past the access token lifetime.
    test('an expired access token, and an ID token used as the bearer, are 401 invalid_token (UI-08)', async () => {
      const body = await tokensFor('openid');
      assert.equal((await userInfo(server, body.id_token as string)).status, 401);
      assert.match((await userInfo(server, body.id_token as string)).headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      clock.advance((body.expires_in as number) * 1000 - 1000);
      assert.equal((await userInfo(server, body.access_token as string)).status, 200);
      clock.advance(1000);
      const expired = await userInfo(server, body.access_token as string);
      assert.equal(expired.status, 401);
      assert.match(expired.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      assert.equal(expired.body.sub, undefined);
    });
  });
}
