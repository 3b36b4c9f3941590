/**
 * One client per ID-token algorithm (issue 12, item 8; docs/conformance.md AL-*), end to end with
 * openid-client v6 as the relying party against a real listening gatehouse: the client registers
 * id_token_signed_response_alg and userinfo_signed_response_alg, openid-client checks the ID
 * token's and the signed UserInfo's signatures against the JWKS (enableNonRepudiationChecks), jose
 * checks them again with only that algorithm allowed, the at_hash is recomputed with the
 * algorithm's hash, and RP-initiated logout accepts the ID token as id_token_hint.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import * as oidc from 'openid-client';
import { SIGNING_ALGS } from '../../src/protocol/constants.ts';
import { createUser } from '../../src/identity/users.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, loginThroughForm } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const PASSWORD = 'correct horse battery staple';
const REDIRECT = 'https://rp.example.com/callback';
const AFTER_LOGOUT = 'https://rp.example.com/logged-out';

/**
 * OIDC Core §3.1.3.6, computed here independently of the server: the left half of the hash of the
 * access token, SHA-256 for RS256, PS256 and ES256, SHA-512 for EdDSA over Ed25519 (RFC 8032 §5.1;
 * openid/connect issue 1125).
 */
const EXPECTED_HASH: Record<string, string> = { RS256: 'sha256', PS256: 'sha256', ES256: 'sha256', EdDSA: 'sha512' };
function expectedAtHash(accessToken: string, alg: string): string {
  const digest = createHash(EXPECTED_HASH[alg]!).update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/** The JWKS key types of each algorithm (RFC 7518 §6, RFC 8037 §2). */
const KEY_TYPES: Record<string, { kty: string; crv?: string }> = { RS256: { kty: 'RSA' }, PS256: { kty: 'RSA' }, ES256: { kty: 'EC', crv: 'P-256' }, EdDSA: { kty: 'OKP', crv: 'Ed25519' } };

for (const db of DATABASES) {
  describe(`ID tokens and UserInfo in every algorithm, openid-client as relying party, on ${db.name}`, () => {
    let server: RunningServer;
    let username: string;
    before(async () => {
      server = await startServer(db);
      username = `sig-${Date.now()}`;
      await createUser({ ...server.gatehouse.store, clock: systemClock, random: cryptoRandom }, { username, password: PASSWORD, givenName: 'Signe', familyName: 'Example', email: 'signe@example.com' }, AS_OPERATOR);
    });
    after(async () => server.close());

    const jwks = async () => (await (await fetch(`${server.url}/uas/oauth2/metadata.jwks`)).json()) as JSONWebKeySet;

    test('the algorithms openid-client sees advertised are exactly the ones the key ring signs with, and the JWKS has a key of each', async () => {
      const config = await oidc.discovery(new URL(server.issuer), 'anyone', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
      const metadata = config.serverMetadata();
      assert.deepEqual(metadata.id_token_signing_alg_values_supported, [...SIGNING_ALGS]);
      assert.deepEqual(metadata.userinfo_signing_alg_values_supported, [...SIGNING_ALGS]);
      const signable: string[] = [];
      for (const alg of ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'HS256']) {
        const key = await server.gatehouse.deps.keyRing.activeKey(alg as never).catch(() => undefined);
        if (key?.alg === alg) signable.push(alg);
      }
      assert.deepEqual(signable, metadata.id_token_signing_alg_values_supported);
      const published = (await jwks()).keys;
      assert.deepEqual(published.map((k) => k.alg).sort(), [...SIGNING_ALGS].sort());
      for (const key of published) assert.deepEqual({ kty: key.kty, ...(key.crv ? { crv: key.crv } : {}) }, KEY_TYPES[key.alg!], key.alg);
    });

    for (const alg of SIGNING_ALGS) {
      test(`${alg}: the ID token, its at_hash and the signed UserInfo verify at openid-client and with jose; it works as id_token_hint at logout`, async () => {
        const registered = await registerClient({ clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom }, {
          client_name: `${alg} app`,
          redirect_uris: [REDIRECT],
          post_logout_redirect_uris: [AFTER_LOGOUT],
          id_token_signed_response_alg: alg,
          userinfo_signed_response_alg: alg,
        });
        const { clientId } = registered.client;
        const secret = registered.clientSecret!;
        const config = await oidc.discovery(
          new URL(server.issuer),
          clientId,
          { client_secret: secret, id_token_signed_response_alg: alg, userinfo_signed_response_alg: alg },
          oidc.ClientSecretBasic(secret),
          // allowInsecureRequests: the test issuer is http on loopback. Non-repudiation: openid-client
          // verifies the signatures of the ID token and the JWT UserInfo against the JWKS.
          { execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks] },
        );

        const jar = new CookieJar();
        const verifier = oidc.randomPKCECodeVerifier();
        const nonce = oidc.randomNonce();
        const state = oidc.randomState();
        const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid profile email', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', nonce, state });
        const redirect = await loginThroughForm({ baseUrl: server.url, jar }, Object.fromEntries(url.searchParams), { username, password: PASSWORD });
        const tokens = await oidc.authorizationCodeGrant(config, new URL(redirect.headers.get('location')!), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });

        const idToken = tokens.id_token!;
        const header = decodeProtectedHeader(idToken);
        assert.equal(header.alg, alg);
        const key = (await jwks()).keys.find((k) => k.kid === header.kid);
        assert.equal(key?.alg, alg, 'the kid names a published key of the same algorithm');
        // jose, allowing only this algorithm: the signature, iss and aud.
        const { payload } = await jwtVerify(idToken, createLocalJWKSet(await jwks()), { algorithms: [alg], issuer: server.issuer, audience: clientId });
        assert.equal(payload.nonce, nonce);
        assert.equal(payload.at_hash, expectedAtHash(tokens.access_token, alg));
        assert.equal(tokens.claims()!.sub, payload.sub);

        // OIDC Core §5.3.2: application/jwt, signed with the client's algorithm, with iss and aud.
        const raw = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
        assert.equal(raw.status, 200);
        assert.equal(raw.headers.get('content-type'), 'application/jwt');
        const jwt = await raw.text();
        assert.equal(decodeProtectedHeader(jwt).alg, alg);
        const signed = await jwtVerify(jwt, createLocalJWKSet(await jwks()), { algorithms: [alg], issuer: server.issuer, audience: clientId });
        assert.equal(signed.payload.sub, payload.sub);
        assert.equal(signed.payload.email, 'signe@example.com');
        const userInfo = await oidc.fetchUserInfo(config, tokens.access_token, payload.sub!);
        assert.equal(userInfo.sub, payload.sub);
        assert.equal(userInfo.name, 'Signe Example');

        // RP-Initiated Logout §2: a valid hint ends the session at once and returns to the client.
        const logout = await browse(oidc.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: AFTER_LOGOUT, state: 'bye' }).href, jar);
        assert.equal(logout.status, 302, `logout answered ${logout.status}: the ${alg} id_token_hint was not accepted`);
        assert.equal(logout.headers.get('location'), `${AFTER_LOGOUT}?state=bye`);
      });
    }

    test('a client without the metadata gets RS256 ID tokens and plain JSON UserInfo (OIDC Registration §2)', async () => {
      const registered = await registerClient({ clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom }, { client_name: 'Default app', redirect_uris: [REDIRECT] });
      const secret = registered.clientSecret!;
      const config = await oidc.discovery(new URL(server.issuer), registered.client.clientId, secret, oidc.ClientSecretBasic(secret), { execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks] });
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const redirect = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, Object.fromEntries(url.searchParams), { username, password: PASSWORD });
      const tokens = await oidc.authorizationCodeGrant(config, new URL(redirect.headers.get('location')!), { pkceCodeVerifier: verifier, idTokenExpected: true });
      assert.equal(decodeProtectedHeader(tokens.id_token!).alg, 'RS256');
      const raw = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.match(raw.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(((await raw.json()) as Record<string, unknown>).sub, tokens.claims()!.sub);
    });
  });
}
