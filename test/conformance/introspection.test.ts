/**
 * Conformance: token introspection (RFC 7662; research/conformance.md §2.14 INT-*). Time moves on
 * a ManualClock. docs/conformance.md maps the rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { addClient, addUser, basic, mintCode, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { assertTokenResponse, clockAtNow, redeem, seconds, verifyIdToken } from './helpers.ts';

for (const db of DATABASES) {
  describe(`conformance: introspection on ${db.name}`, () => {
    const clock = clockAtNow();
    let server: RunningServer;
    let app: { client: Client; secret: string };
    let rs: Record<string, string>;
    let user: User;
    const introspect = (token: string, headers: Record<string, string> = rs, extra: Record<string, string> = {}) => postForm(`${server.url}/uas/oauth2/introspection`, { token, ...extra }, headers);
    const grant = async (overrides?: Partial<Client>) => {
      const rp = overrides === undefined ? app : await addClient(server.gatehouse.store, overrides);
      const { code } = await mintCode(server.gatehouse.store, rp.client, user, { now: clock.now() });
      return { code, body: assertTokenResponse(await redeem(server, rp.client, rp.secret, code, { redirectUri: REDIRECT_URI })), rp };
    };

    before(async () => {
      server = await startServer(db, { clock });
      app = await addClient(server.gatehouse.store);
      const resourceServer = await addClient(server.gatehouse.store, { grantTypes: [] });
      rs = { authorization: basic(resourceServer.client.clientId, resourceServer.secret) };
      user = await addUser(server.gatehouse.store);
    });
    after(async () => server.close());

    test('an active token: active is the JSON boolean true, exp and iat whole seconds, iss the issuer, sub the ID token sub, scope space-separated (INT-03)', async () => {
      const { body } = await grant();
      const response = await introspect(body.access_token as string);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      const claims = response.body;
      assert.equal(claims.active, true);
      assert.ok(Number.isInteger(claims.exp) && Number.isInteger(claims.iat));
      assert.equal(claims.iat, seconds(clock));
      assert.equal(claims.exp, seconds(clock) + (body.expires_in as number));
      assert.equal(claims.iss, server.issuer);
      assert.equal(claims.sub, (await verifyIdToken(server, body.id_token as string)).payload.sub);
      assert.equal(claims.scope, 'openid profile email');
      assert.equal(claims.token_type, 'access_token');
    });

    test('failed caller authentication is 401 invalid_client with a Basic challenge and no token data (INT-02)', async () => {
      const { body } = await grant();
      for (const headers of [{}, { authorization: basic(app.client.clientId, 'wrong') }, { authorization: 'Bearer x' }] as Record<string, string>[]) {
        const response = await introspect(body.access_token as string, headers);
        assert.equal(response.status, 401, JSON.stringify(headers));
        assert.equal(response.body.error, 'invalid_client');
        assert.match(response.headers.get('www-authenticate') ?? '', /^Basic /);
        assert.equal(response.body.active, undefined);
        assert.equal(response.body.sub, undefined);
      }
      assert.equal((await introspect(body.access_token as string)).body.active, true, 'the control: the token is active for a caller that authenticates');
    });

    test('a rotated-out refresh token and the tokens of a replayed code answer exactly {"active":false}; before that they were active (INT-04, INT-09)', async () => {
      const rotating = await grant({ rotateRefreshTokens: true });
      const oldRefresh = rotating.body.refresh_token as string;
      // A refresh token is introspectable only by its own client (finding 12 b).
      const own = { authorization: basic(rotating.rp.client.clientId, rotating.rp.secret) };
      assert.equal((await introspect(oldRefresh, own)).body.active, true);
      const rotated = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: oldRefresh }, { authorization: basic(rotating.rp.client.clientId, rotating.rp.secret) });
      assert.notEqual(assertTokenResponse(rotated).refresh_token, oldRefresh);
      assert.deepEqual((await introspect(oldRefresh, own)).body, { active: false });
      assert.equal((await introspect(rotated.body.refresh_token as string, own)).body.active, true);

      const replayed = await grant();
      assert.equal((await introspect(replayed.body.access_token as string)).body.active, true);
      const again = await redeem(server, app.client, app.secret, replayed.code, { redirectUri: REDIRECT_URI });
      assert.equal(again.body.error, 'invalid_grant');
      assert.deepEqual((await introspect(replayed.body.access_token as string)).body, { active: false });
      assert.deepEqual((await introspect(replayed.body.refresh_token as string, { authorization: basic(app.client.clientId, app.secret) })).body, { active: false });
    });

    // Last: it moves the shared clock past the access token lifetime.
    test('an access token past its lifetime answers exactly {"active":false}, with 200 (INT-04, INT-05, INT-07)', async () => {
      const { body } = await grant();
      clock.advance((body.expires_in as number) * 1000 - 1000);
      assert.equal((await introspect(body.access_token as string)).body.active, true);
      clock.advance(1000);
      const expired = await introspect(body.access_token as string, rs, { token_type_hint: 'access_token' });
      assert.equal(expired.status, 200);
      assert.deepEqual(expired.body, { active: false });
      assert.equal((await introspect(body.refresh_token as string, { authorization: basic(app.client.clientId, app.secret) })).body.active, true, 'the refresh token lives longer');
    });
  });
}
