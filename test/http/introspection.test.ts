import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addClient, addUser, basic, mintCode, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

/** SQL an attacker might try, each within the limits of a token and a client_id, so it reaches the lookup. */
const HOSTILE = ["' OR 1=1 --", "x' OR 'x'='x", "'; DROP TABLE tokens; --", "'); DELETE FROM clients; --", "%' OR token_hash LIKE '%", '" OR ""="', "\\'; SELECT pg_sleep(5); --"];

for (const db of DATABASES) {
  describe(`introspection and revocation on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db);
    });
    after(async () => server.close());
    const introspect = (form: Record<string, string>, headers: Record<string, string>) => postForm(`${server.url}/uas/oauth2/introspection`, form, headers);
    const revoke = (form: Record<string, string>, headers: Record<string, string>) => postForm(`${server.url}/uas/oauth2/revocation`, form, headers);

    /** Use case 2: a native (public) app's token, introspected by a resource server (confidential client). */
    async function setUp() {
      const store = server.gatehouse.store;
      const app = await addClient(store);
      const resourceServer = await addClient(store, { grantTypes: [] });
      const user = await addUser(store);
      const { code, row } = await mintCode(store, app.client, user, { scope: 'openid profile' });
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(app.client.clientId, app.secret) });
      return { app, rs: { authorization: basic(resourceServer.client.clientId, resourceServer.secret) }, rsId: resourceServer.client.clientId, appAuth: { authorization: basic(app.client.clientId, app.secret) }, user, row, tokens: tokens.body };
    }

    test('an active access token: active, the userinfo claims, aud = the asking client, scope, client_id, token_type (INT-03, spec)', async () => {
      const { app, rs, rsId, user, row, tokens } = await setUp();
      const response = await introspect({ token: tokens.access_token as string }, rs);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      const body = response.body;
      assert.equal(body.active, true);
      assert.equal(body.sub, user.id);
      assert.equal(body.iss, server.issuer);
      assert.equal(body.aud, rsId);
      assert.equal(body.client_id, app.client.clientId);
      assert.equal(body.scope, 'openid profile');
      assert.equal(body.token_type, 'access_token');
      assert.equal(body.session_index, row.sessionIndex);
      assert.deepEqual(body.amr, ['pwd']);
      assert.equal(typeof body.exp, 'number');
      assert.equal(typeof body.iat, 'number');
      assert.equal(typeof body.auth_time, 'number');
      assert.equal(body.name, 'Ada Lovelace');
    });

    test('a refresh token is active with token_type refresh_token; a wrong hint does not hide a token (INT-06, INT-09)', async () => {
      const { rs, appAuth, tokens } = await setUp();
      const refresh = await introspect({ token: tokens.refresh_token as string, token_type_hint: 'access_token' }, appAuth);
      assert.equal(refresh.body.active, true);
      assert.equal(refresh.body.token_type, 'refresh_token');
      const access = await introspect({ token: tokens.access_token as string, token_type_hint: 'refresh_token' }, rs);
      assert.equal(access.body.active, true);
    });

    test('a refresh token introspected by any client but its own answers exactly {"active":false}; its access token stays introspectable by the resource server (finding 12 b)', async () => {
      const { rs, appAuth, tokens } = await setUp();
      const other = await addClient(server.gatehouse.store);
      const otherAuth = { authorization: basic(other.client.clientId, other.secret) };
      for (const [caller, hint] of [[rs, undefined], [otherAuth, 'refresh_token'], [rs, 'access_token']] as const) {
        const response = await introspect({ token: tokens.refresh_token as string, ...(hint === undefined ? {} : { token_type_hint: hint }) }, caller);
        assert.equal(response.status, 200);
        assert.deepEqual(response.body, { active: false });
      }
      assert.equal((await introspect({ token: tokens.refresh_token as string }, appAuth)).body.active, true, 'its own client still may');
      assert.equal((await introspect({ token: tokens.access_token as string }, rs)).body.active, true);
      assert.equal((await introspect({ token: tokens.access_token as string }, otherAuth)).body.active, true);
    });

    test('unknown, garbage and huge tokens answer exactly {"active":false} (INT-04/05)', async () => {
      const { rs } = await setUp();
      // 'x' x 5000 is past the 512 characters any token of ours has: refused before the lookup. The rest are looked up.
      for (const token of ['nope', 'x'.repeat(5000), '../../etc/passwd', 'A'.repeat(43)]) {
        const response = await introspect({ token }, rs);
        assert.equal(response.status, 200);
        assert.deepEqual(response.body, { active: false });
      }
    });

    test('SQL in the token or the client_id reaches the lookups and finds nothing; the tables are intact after (INT-04)', async () => {
      const { rs, rsId, tokens, appAuth } = await setUp();
      const resourceServer = await addClient(server.gatehouse.store, { grantTypes: [] });
      // Authenticated callers, values within every length and character limit: each is looked up by its hash.
      for (const token of HOSTILE) {
        const response = await introspect({ token }, rs);
        assert.equal(response.status, 200, token);
        assert.deepEqual(response.body, { active: false }, token);
      }
      // As a client_id, with the real client's secret, Basic and form: looked up as it is, and unknown.
      for (const clientId of HOSTILE.slice(0, 3)) {
        for (const [form, headers] of [[{}, { authorization: basic(clientId, resourceServer.secret) }], [{ client_id: clientId, client_secret: resourceServer.secret }, {}]] as const) {
          const response = await introspect({ token: tokens.access_token as string, ...form }, headers);
          assert.equal(response.status, 401, clientId);
          assert.equal(response.body.error, 'invalid_client', clientId);
        }
      }
      // Nothing was dropped or changed: the clients still authenticate and the tokens are still active.
      assert.equal((await introspect({ token: tokens.access_token as string }, rs)).body.active, true);
      assert.equal((await introspect({ token: tokens.refresh_token as string }, appAuth)).body.active, true);
      assert.equal((await server.gatehouse.store.clients.get(rsId))?.clientId, rsId);
    });

    test('missing or wrong credentials, or a public client: 401 invalid_client and no token data; the right ones answer (INT-02)', async () => {
      const { tokens, rs } = await setUp();
      const resourceServer = await addClient(server.gatehouse.store, { grantTypes: [] });
      const { clientId } = resourceServer.client;
      const token = tokens.access_token as string;
      const refused = async (what: string, form: Record<string, string>, headers: Record<string, string>) => {
        const response = await introspect({ token, ...form }, headers);
        assert.deepEqual([response.status, response.body.error, response.body.active], [401, 'invalid_client', undefined], what);
        assert.match(response.headers.get('www-authenticate') ?? '', /^Basic /, what);
      };
      await refused('no credentials', {}, {});
      await refused('wrong secret, Basic', {}, { authorization: basic(clientId, `${resourceServer.secret}x`) });
      await refused('wrong secret, form', { client_id: clientId, client_secret: `${resourceServer.secret}x` }, {});
      await refused('unknown client_id, Basic', {}, { authorization: basic(`${clientId}-unknown`, resourceServer.secret) });
      await refused('unknown client_id, form', { client_id: `${clientId}-unknown`, client_secret: resourceServer.secret }, {});
      const publicClient = await addClient(server.gatehouse.store, { tokenEndpointAuthMethod: 'none' });
      await refused('a public client', { client_id: publicClient.client.clientId }, {});
      // The control: the same client with its right secret, both ways, is answered.
      assert.equal((await introspect({ token }, rs)).body.active, true);
      assert.equal((await introspect({ token }, { authorization: basic(clientId, resourceServer.secret) })).body.active, true);
      assert.equal((await introspect({ token, client_id: clientId, client_secret: resourceServer.secret }, {})).body.active, true);
    });

    test('a missing token parameter is invalid_request (INT-08)', async () => {
      const { rs } = await setUp();
      const response = await introspect({}, rs);
      assert.equal(response.status, 400);
      assert.equal(response.body.error, 'invalid_request');
    });

    test('revoking an access token makes it inactive; unknown tokens still get 200 (RFC 7009 §2.2)', async () => {
      const { rs, appAuth, tokens } = await setUp();
      const response = await revoke({ token: tokens.access_token as string }, appAuth);
      assert.equal(response.status, 200);
      assert.deepEqual((await introspect({ token: tokens.access_token as string }, rs)).body, { active: false });
      assert.equal((await introspect({ token: tokens.refresh_token as string }, appAuth)).body.active, true, 'the refresh token lives on');
      assert.equal((await revoke({ token: 'unknown' }, appAuth)).status, 200);
    });

    test('revoking a refresh token revokes its family; another client cannot revoke it', async () => {
      const { rs, appAuth, tokens } = await setUp();
      assert.equal((await revoke({ token: tokens.refresh_token as string }, rs)).status, 200);
      assert.equal((await introspect({ token: tokens.refresh_token as string }, appAuth)).body.active, true, "another client's revocation does nothing");
      await revoke({ token: tokens.refresh_token as string, token_type_hint: 'refresh_token' }, appAuth);
      assert.deepEqual((await introspect({ token: tokens.refresh_token as string }, appAuth)).body, { active: false });
      assert.deepEqual((await introspect({ token: tokens.access_token as string }, rs)).body, { active: false });
    });

    test('revocation needs client authentication', async () => {
      const { tokens } = await setUp();
      assert.equal((await revoke({ token: tokens.access_token as string }, {})).status, 401);
    });
  });
}
