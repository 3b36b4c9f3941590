import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { addClient, addUser, basic, mintCode, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { warmUp } from '../helpers/store.ts';

/** The refresh race: how many trials, each with how many simultaneous uses of one token. */
const RACE_TRIALS = 5;
const RACERS = 20;

for (const db of DATABASES) {
  describe(`token endpoint, refresh_token grant, on ${db.name}`, () => {
    let server: RunningServer;
    let tokenUrl: string;
    before(async () => {
      server = await startServer(db);
      tokenUrl = `${server.url}/uas/oauth2/token`;
    });
    after(async () => server.close());
    const store = () => server.gatehouse.store;

    async function grant(overrides: Partial<Client> = {}, scope = 'openid profile email') {
      const { client, secret } = await addClient(store(), overrides);
      const user = await addUser(store());
      const auth: Record<string, string> = client.tokenEndpointAuthMethod === 'none' ? {} : { authorization: basic(client.clientId, secret) };
      const pkce = client.tokenEndpointAuthMethod === 'none' ? { codeChallenge: 'A'.repeat(43), codeChallengeMethod: 'plain' as const } : {};
      const form: Record<string, string> = client.tokenEndpointAuthMethod === 'none' ? { client_id: client.clientId, code_verifier: 'A'.repeat(43) } : {};
      const { code } = await mintCode(store(), client, user, { scope, ...pkce });
      const first = await postForm(tokenUrl, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...form }, auth);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
        postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: refreshToken, ...(client.tokenEndpointAuthMethod === 'none' ? { client_id: client.clientId } : {}), ...extra }, auth);
      return { client, secret, user, auth, first: first.body, refresh };
    }

    test('a refresh returns a new access token and no id_token; a confidential client keeps its refresh token (RT-02, spec)', async () => {
      const { first, refresh } = await grant();
      const response = await refresh(first.refresh_token as string);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.body.token_type, 'Bearer');
      assert.equal(response.body.id_token, undefined);
      assert.notEqual(response.body.access_token, first.access_token);
      assert.equal(response.body.refresh_token, first.refresh_token);
      assert.equal(response.body.scope, 'openid profile email');
      assert.equal((await refresh(first.refresh_token as string)).status, 200, 'without rotation the token stays usable');
    });

    test('a narrower scope is granted; a broader one is invalid_scope (RT-03/04)', async () => {
      const { first, refresh } = await grant();
      const narrower = await refresh(first.refresh_token as string, { scope: 'openid' });
      assert.equal(narrower.status, 200);
      assert.equal(narrower.body.scope, 'openid');
      const broader = await refresh(first.refresh_token as string, { scope: 'openid phone' });
      assert.equal(broader.status, 400);
      assert.equal(broader.body.error, 'invalid_scope');
    });

    test("another client's refresh token, an unknown one or an access token is invalid_grant (RT-05/07)", async () => {
      const a = await grant();
      const b = await grant();
      assert.equal((await b.refresh(a.first.refresh_token as string)).body.error, 'invalid_grant');
      assert.equal((await a.refresh('no-such-token')).body.error, 'invalid_grant');
      assert.equal((await a.refresh(a.first.access_token as string)).body.error, 'invalid_grant');
    });

    test('public clients always rotate; a rotated token used again revokes the whole family (RT-09)', async () => {
      const { first, refresh } = await grant({ tokenEndpointAuthMethod: 'none' });
      const second = await refresh(first.refresh_token as string);
      assert.equal(second.status, 200);
      assert.notEqual(second.body.refresh_token, first.refresh_token);
      const reuse = await refresh(first.refresh_token as string);
      assert.equal(reuse.body.error, 'invalid_grant');
      assert.equal((await refresh(second.body.refresh_token as string)).body.error, 'invalid_grant', 'the newest token of the family is revoked too');
      const userinfo = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${second.body.access_token as string}` } });
      assert.equal(userinfo.status, 401, 'and so are its access tokens');
    });

    test('a confidential client configured to rotate gets a new refresh token with the original scope', async () => {
      const { first, refresh } = await grant({ rotateRefreshTokens: true });
      const second = await refresh(first.refresh_token as string, { scope: 'openid' });
      assert.equal(second.status, 200);
      assert.notEqual(second.body.refresh_token, first.refresh_token);
      const third = await refresh(second.body.refresh_token as string);
      assert.equal(third.body.scope, 'openid profile email', 'the new refresh token kept the full grant');
    });

    test(`concurrent uses of one rotating refresh token (${RACE_TRIALS} trials of ${RACERS} at once): exactly one succeeds, the rest are reuse`, async () => {
      for (let trial = 0; trial < RACE_TRIALS; trial++) {
        const { first, refresh } = await grant({ rotateRefreshTokens: true });
        // Every pooled connection open first, so the requests race on separate connections instead of queueing on connection setup.
        await warmUp(store(), server.config.databasePoolSize);
        const results = await Promise.all(Array.from({ length: RACERS }, () => refresh(first.refresh_token as string)));
        // One atomic markRotated wins; whoever loses, or reads the token after, is refused as reuse (RFC 9700 §4.14.2).
        const winners = results.filter((r) => r.status === 200);
        assert.equal(winners.length, 1, `trial ${trial}: ${winners.length} of ${RACERS} concurrent uses succeeded`);
        for (const r of results) if (r.status !== 200) assert.deepEqual([r.status, r.body.error], [400, 'invalid_grant'], `trial ${trial}`);
      }
    });

    test('revoking the refresh token ends the grant (RT-10)', async () => {
      const { first, refresh, auth } = await grant();
      const revoked = await postForm(`${server.url}/uas/oauth2/revocation`, { token: first.refresh_token as string }, auth);
      assert.equal(revoked.status, 200);
      assert.equal((await refresh(first.refresh_token as string)).body.error, 'invalid_grant');
    });
  });
}
