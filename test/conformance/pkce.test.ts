/**
 * Conformance: PKCE (RFC 7636; research/conformance.md §2.8 PK-*) through the real authorization
 * endpoint and login form, then the token endpoint. docs/conformance.md maps the rows.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { assertErrorRedirect } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { assertTokenResponse, authorize, codeRequest, CookieJar, redeem, userInfo, verifyIdToken, type Credentials } from './helpers.ts';

const PASSWORD = 'conformance pkce 1';
const s256 = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');

for (const db of DATABASES) {
  describe(`conformance: PKCE on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    let secret: string;
    let credentials: Credentials;
    let jar: CookieJar;
    /** A code for `params` from the signed-in browser (one login for the whole suite). */
    const codeFor = async (extra: Record<string, string>, rp: Client = client) => (await authorize(server, jar, codeRequest(rp, extra), credentials)).code;

    before(async () => {
      server = await startServer(db);
      ({ client, clientSecret: secret } = await createTestClient(server.gatehouse.store));
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      credentials = { username: user.username, password: PASSWORD };
      jar = new CookieJar();
      await authorize(server, jar, codeRequest(client), credentials, { expectLogin: true });
    });
    after(async () => server.close());

    test('oidcc-ensure-request-with-valid-pkce-succeeds: an S256 challenge from a confidential Basic client, then its verifier (module 38; PK-01, PK-02)', async () => {
      const verifier = randomBytes(48).toString('base64url'); // 64 characters
      const code = await codeFor({ code_challenge: s256(verifier), code_challenge_method: 'S256' });
      const body = assertTokenResponse(await redeem(server, client, secret, code, { extra: { code_verifier: verifier } }));
      await verifyIdToken(server, body.id_token as string);
      assert.equal((await userInfo(server, body.access_token as string)).status, 200);
    });

    test('a challenge without a method is plain for a client that registered none: the verifier must equal it, its S256 transform is refused (PK-06)', async () => {
      const verifier = randomBytes(32).toString('base64url');
      const plain = await codeFor({ code_challenge: verifier });
      assertTokenResponse(await redeem(server, client, secret, plain, { extra: { code_verifier: verifier } }));
      // Sent as the challenge, s256(verifier) is taken as plain, so the verifier that hashes to it does not match.
      const notS256 = await codeFor({ code_challenge: s256(verifier) });
      const refused = await redeem(server, client, secret, notS256, { extra: { code_verifier: verifier } });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error, 'invalid_grant');
    });

    test('an unknown transform or a malformed challenge is an invalid_request redirect with the state (PK-07)', async () => {
      const good = s256(randomBytes(32).toString('base64url'));
      const cases: Record<string, string>[] = [
        { code_challenge: good, code_challenge_method: 'S512' },
        { code_challenge: good, code_challenge_method: 's256' },
        { code_challenge: good, code_challenge_method: 'PLAIN' },
        { code_challenge: 'a'.repeat(42), code_challenge_method: 'plain' },
        { code_challenge: 'a'.repeat(129), code_challenge_method: 'plain' },
        { code_challenge: `${'a'.repeat(42)}+`, code_challenge_method: 'plain' },
        { code_challenge: `${'a'.repeat(42)}=`, code_challenge_method: 'plain' },
        { code_challenge: 'a'.repeat(44), code_challenge_method: 'S256' },
      ];
      for (const extra of cases) {
        const response = await browse(authorizationUrl(server.url, codeRequest(client, { ...extra, state: 'pk' })), jar);
        assertErrorRedirect(response, { redirectUri: client.redirectUris[0]!, error: 'invalid_request', state: 'pk', issuer: server.issuer });
      }
    });

    test('a malformed code_verifier (too short, too long, other characters) is 400 invalid_request, and the attempt consumes the code (PK-09, decision 7)', async () => {
      const verifier = randomBytes(32).toString('base64url');
      for (const bad of ['a'.repeat(42), 'a'.repeat(129), `${verifier.slice(0, 42)}/`, `${verifier.slice(0, 42)} `]) {
        const code = await codeFor({ code_challenge: s256(verifier), code_challenge_method: 'S256' });
        const refused = await redeem(server, client, secret, code, { extra: { code_verifier: bad } });
        assert.equal(refused.status, 400);
        assert.equal(refused.body.error, 'invalid_request', JSON.stringify(bad));
        const retried = await redeem(server, client, secret, code, { extra: { code_verifier: verifier } });
        assert.equal(retried.body.error, 'invalid_grant', 'a failed redemption consumed the code');
      }
    });

    test('the challenge is never exposed (redirect, token response, ID token, UserInfo, introspection); a plain mismatch is invalid_grant (PK-10)', async () => {
      const verifier = randomBytes(32).toString('base64url');
      const challenge = s256(verifier);
      const { code, redirect } = await authorize(server, jar, codeRequest(client, { code_challenge: challenge, code_challenge_method: 'S256', scope: 'openid profile' }), credentials);
      assert.ok(!redirect.href.includes(challenge));
      const response = await redeem(server, client, secret, code, { extra: { code_verifier: verifier } });
      const body = assertTokenResponse(response);
      const { payload } = await verifyIdToken(server, body.id_token as string);
      const introspection = await postForm(`${server.url}/uas/oauth2/introspection`, { token: body.access_token as string }, { authorization: basic(client.clientId, secret) });
      assert.equal(introspection.body.active, true);
      for (const seen of [body, payload, (await userInfo(server, body.access_token as string)).body, introspection.body]) {
        assert.ok(!JSON.stringify(seen).includes(challenge), 'the challenge is not echoed');
        assert.equal((seen as Record<string, unknown>).code_challenge, undefined);
      }
      const plain = await codeFor({ code_challenge: verifier, code_challenge_method: 'plain' });
      const mismatch = await redeem(server, client, secret, plain, { extra: { code_verifier: `${verifier.slice(0, -1)}${verifier.endsWith('A') ? 'B' : 'A'}` } });
      assert.equal(mismatch.status, 400);
      assert.equal(mismatch.body.error, 'invalid_grant');
    });
  });
}
