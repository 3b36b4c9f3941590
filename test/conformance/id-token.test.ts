/**
 * Conformance: the ID token from the token endpoint (OIDC Core §2, §3.1.3.6-3.1.3.7;
 * research/conformance.md §2.11 IDT-*), checked the way the OIDF suite's standard ID token checks
 * do, with the signature and at_hash recomputed here. docs/conformance.md maps the rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { assertTokenResponse, authorize, clockAtNow, codeRequest, CookieJar, expectedAtHash, redeem, seconds, userInfo, verifyIdToken, type Credentials } from './helpers.ts';

const PASSWORD = 'conformance id token 1';
const SCOPE_CLAIMS = ['name', 'given_name', 'family_name', 'preferred_username', 'updated_at', 'email', 'email_verified'];

for (const db of DATABASES) {
  describe(`conformance: ID token on ${db.name}`, () => {
    const clock = clockAtNow();
    let server: RunningServer;
    let client: Client;
    let secret: string;
    let user: User;
    let credentials: Credentials;
    let jar: CookieJar;
    let loginTime: number;
    /** A silent code from the signed-in browser, redeemed; returns the token response and the verified ID token. */
    const flow = async (extra: Record<string, string> = {}, rp = { client, secret }) => {
      const { code } = await authorize(server, jar, codeRequest(rp.client, extra), credentials, { expectLogin: false });
      const body = assertTokenResponse(await redeem(server, rp.client, rp.secret, code));
      return { body, ...(await verifyIdToken(server, body.id_token as string)) };
    };

    before(async () => {
      server = await startServer(db, { clock });
      ({ client, clientSecret: secret } = await createTestClient(server.gatehouse.store));
      user = await createTestUser(server.gatehouse.store, { password: PASSWORD, givenName: 'Grace', familyName: 'Hopper', email: 'grace@example.test' });
      credentials = { username: user.username, password: PASSWORD };
      jar = new CookieJar();
      loginTime = seconds(clock);
      await authorize(server, jar, codeRequest(client), credentials, { expectLogin: true });
      clock.advance(90_000);
    });
    after(async () => server.close());

    test('a compact RS256 JWS with the kid of a JWKS key and no jku, jwk, x5u, x5c or crit; iss, aud, azp, sub, iat, exp and auth_time as the spec says (IDT-01..06, IDT-08, JWKS-06)', async () => {
      const { header, payload } = await flow();
      assert.deepEqual(Object.keys(header).sort(), ['alg', 'kid', 'typ']);
      assert.equal(header.typ, 'JWT');
      assert.equal(payload.iss, server.issuer);
      assert.equal(payload.aud, client.clientId, 'a single audience, as a string');
      assert.equal(payload.azp, client.clientId);
      assert.equal(payload.sub, user.id);
      assert.match(payload.sub as string, /^[\x21-\x7e]{1,255}$/);
      assert.ok(Number.isInteger(payload.iat) && Number.isInteger(payload.exp) && Number.isInteger(payload.auth_time), 'NumericDates are whole seconds');
      assert.equal(payload.iat, seconds(clock));
      assert.equal(payload.exp, seconds(clock) + server.config.idTokenTtl);
      assert.equal(payload.auth_time, loginTime, 'the time of the real login, not of this SSO use');
      assert.deepEqual(payload.amr, ['pwd']);
      assert.equal(payload.acr, undefined, 'no acr unless one is configured (IDT-09)');
    });

    test('at_hash is the left half of SHA-256 of the access token, recomputed here; there is no c_hash (IDT-10, IDT-11)', async () => {
      const { body, payload } = await flow();
      assert.equal(payload.at_hash, expectedAtHash(body.access_token as string));
      assert.equal((payload.at_hash as string).length, 22);
      assert.equal(payload.c_hash, undefined);
    });

    test('nonce is copied unchanged when sent (512 characters of -._~ and more) and absent when not sent (IDT-07, AZ-08)', async () => {
      const nonce = "-._~az09!$'()*,;:@[]?/".repeat(24).slice(0, 512);
      const sent = await flow({ nonce });
      assert.equal(sent.payload.nonce, nonce);
      const none = await flow();
      assert.equal('nonce' in none.payload, false);
    });

    test('scope claims stay out of the ID token when an access token is issued: openid profile email puts them in UserInfo only (IDT-12, module 10)', async () => {
      const { body, payload } = await flow({ scope: 'openid profile email' });
      for (const claim of SCOPE_CLAIMS) assert.equal(payload[claim], undefined, claim);
      const info = await userInfo(server, body.access_token as string);
      assert.equal(info.body.email, 'grace@example.test');
      assert.equal(info.body.name, 'Grace Hopper');
    });

    test('a client registered with id_token_scope_claims gets the scope claims in its ID token too, well-typed (IDT-13)', async () => {
      const rp = await createTestClient(server.gatehouse.store, { metadata: { id_token_scope_claims: true } });
      const { payload } = await flow({ scope: 'openid profile email' }, { client: rp.client, secret: rp.clientSecret });
      assert.equal(payload.name, 'Grace Hopper');
      assert.equal(payload.given_name, 'Grace');
      assert.equal(payload.family_name, 'Hopper');
      assert.equal(payload.preferred_username, user.username);
      assert.equal(payload.email, 'grace@example.test');
      assert.ok(Number.isInteger(payload.updated_at), 'updated_at is a number of seconds');
      assert.equal(payload.updated_at, Math.floor(user.updatedAt / 1000));
    });
  });
}

const [sqlite] = DATABASES;
describe('conformance: ID token acr with GATEHOUSE_ACR on sqlite', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer(sqlite!, { env: { GATEHOUSE_ACR: 'urn:gatehouse:ac:password' } });
  });
  after(async () => server.close());

  test('oidcc-ensure-request-with-acr-values-succeeds: the configured acr, a non-empty string, whether or not acr_values names it; amr an array of strings (module 27; IDT-09, AZ-37)', async () => {
    const { client, clientSecret } = await createTestClient(server.gatehouse.store);
    const person = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    const jar = new CookieJar();
    const credentials = { username: person.username, password: PASSWORD };
    for (const [acrValues, expectLogin] of [['urn:other urn:gatehouse:ac:password', true], ['1 2', false]] as const) {
      const { code } = await authorize(server, jar, codeRequest(client, { acr_values: acrValues }), credentials, { expectLogin });
      const body = assertTokenResponse(await redeem(server, client, clientSecret, code));
      const { payload } = await verifyIdToken(server, body.id_token as string);
      assert.equal(payload.acr, 'urn:gatehouse:ac:password', acrValues);
      assert.ok(Array.isArray(payload.amr) && (payload.amr as unknown[]).every((v) => typeof v === 'string' && v !== ''));
    }
  });
});
