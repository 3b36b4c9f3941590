/**
 * A deactivated or deleted client's tokens stop working at once (security test, issue 10,
 * finding 8): userinfo answers invalid_token, introspection exactly {"active":false}, the identity
 * API 401, and the refresh grant invalid_client. The client is changed through a second gatehouse
 * instance on the same database, after the first has read (and cached) it: each instance must read
 * the client's current state, not its own memory of it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { addMember, createGroup } from '../../src/identity/groups.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { deleteClient, setClientActive } from '../../src/oauth/client-registration.ts';
import { addClient, addUser, basic, mintCode, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { call, startApiServer } from './identity-api/helpers.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const API_GROUP = 'Identity API Users';

for (const db of DATABASES) {
  describe(`tokens of an inactive or deleted client on ${db.name}`, () => {
    let server: RunningServer & { apiClientId: string };
    /** Another instance on the same database: the administrator's change lands there. */
    let other: RunningServer;
    let resourceServer: { authorization: string };

    before(async () => {
      server = await startApiServer(db);
      other = await startServer(db, { database: server.database, env: { GATEHOUSE_API_CLIENT_ID: server.apiClientId } });
      await createGroup({ ...server.gatehouse.store, clock: systemClock, random: cryptoRandom }, { name: API_GROUP }, AS_OPERATOR);
      const rs = await addClient(server.gatehouse.store, { grantTypes: [] });
      resourceServer = { authorization: basic(rs.client.clientId, rs.secret) };
    });
    after(async () => {
      await other.close();
      await server.close();
    });

    /** A client allowed the identity API, and an access and a refresh token it got for an API group member. */
    async function issued(): Promise<{ client: Client; secret: string; accessToken: string; refreshToken: string }> {
      const store = server.gatehouse.store;
      const { client, secret } = await addClient(store, { metadata: { aud: [server.apiClientId] } });
      const user = await addUser(store);
      await addMember(store, API_GROUP, user.id, AS_OPERATOR);
      const { code } = await mintCode(store, client, user, { scope: `openid ${server.apiClientId}` });
      const response = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return { client, secret, accessToken: response.body.access_token as string, refreshToken: response.body.refresh_token as string };
    }

    const userinfo = (token: string) => fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } });
    const introspect = (token: string) => postForm(`${server.url}/uas/oauth2/introspection`, { token }, resourceServer);
    const identityApi = (token: string) => call(server, 'GET', '/2.0/users/', { authorization: `Bearer ${token}` });
    const refresh = (t: { client: Client; secret: string; refreshToken: string }) =>
      postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: t.refreshToken }, { authorization: basic(t.client.clientId, t.secret) });

    /** Every use of the tokens works; the first instance has read the client meanwhile. */
    async function assertWorking(t: Awaited<ReturnType<typeof issued>>): Promise<void> {
      assert.equal((await userinfo(t.accessToken)).status, 200);
      assert.equal((await introspect(t.accessToken)).body.active, true);
      // A refresh token is introspectable by its own client only (finding 12 b).
      assert.equal((await postForm(`${server.url}/uas/oauth2/introspection`, { token: t.refreshToken }, { authorization: basic(t.client.clientId, t.secret) })).body.active, true);
      const api = await identityApi(t.accessToken);
      assert.equal(api.status, 200, api.text);
    }

    async function assertRefused(t: Awaited<ReturnType<typeof issued>>): Promise<void> {
      const info = await userinfo(t.accessToken);
      assert.equal(info.status, 401);
      assert.match(info.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      assert.deepEqual(await info.json(), { error: 'invalid_token', error_description: 'The access token is invalid or has expired.' });
      for (const token of [t.accessToken, t.refreshToken]) {
        const answer = await introspect(token);
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.body, { active: false });
      }
      const api = await identityApi(t.accessToken);
      assert.equal(api.status, 401, api.text);
      assert.equal(api.json.error?.code, 'Authentication failed');
      assert.match(api.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      const refreshed = await refresh(t);
      assert.equal(refreshed.status, 401);
      assert.equal(refreshed.body.error, 'invalid_client');
    }

    test('deactivated on another instance: every use of its tokens is refused at once; activated again, they work', async () => {
      const t = await issued();
      await assertWorking(t);
      await setClientActive({ transaction: other.gatehouse.store.transaction, clock: systemClock }, t.client.clientId, false);
      await assertRefused(t);
      await setClientActive({ transaction: other.gatehouse.store.transaction, clock: systemClock }, t.client.clientId, true);
      await assertWorking(t);
    });

    test('deleted on another instance: every use of its tokens is refused at once', async () => {
      const t = await issued();
      await assertWorking(t);
      await deleteClient({ clients: other.gatehouse.store.clients }, t.client.clientId);
      await assertRefused(t);
    });
  });
}
