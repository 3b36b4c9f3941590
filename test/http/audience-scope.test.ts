import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { CookieJar, createTestClient, createTestUser, loginThroughForm, redirectParams, RP_REDIRECT_URI } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

for (const db of DATABASES) {
  describe(`audience scopes (a client_id as a scope value) on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db);
    });
    after(async () => server.close());

    async function grantedScope(requested: string, clientOverrides = {}): Promise<string> {
      const store = server.gatehouse.store;
      const { client, clientSecret } = await createTestClient(store, clientOverrides);
      const user = await createTestUser(store, { password: 'correct horse battery' });
      const flow = { baseUrl: server.url, jar: new CookieJar() };
      const redirect = await loginThroughForm(flow, { response_type: 'code', client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, scope: requested, state: 's' }, { username: user.username, password: 'correct horse battery' });
      const code = redirectParams(redirect).get('code');
      assert.ok(code, `expected a code, got ${redirect.status} ${redirect.headers.get('location')}`);
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: RP_REDIRECT_URI }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(tokens.status, 200);
      return tokens.body.scope as string;
    }

    test("the client_id of a registered, active client is kept as a scope value (Ubisecure's resource audience)", async () => {
      const { client: api } = await createTestClient(server.gatehouse.store, { grantTypes: [] });
      assert.equal(await grantedScope(`openid ${api.clientId} offline_access`), `openid ${api.clientId}`);
    });

    test('an inactive client, an unknown id or a hostile value is dropped like any unknown scope; an active client in the same request is kept', async () => {
      const { client: api } = await createTestClient(server.gatehouse.store, { grantTypes: [] });
      const { client: inactive } = await createTestClient(server.gatehouse.store, { active: false });
      // Scope-token characters (RFC 6749 §3.3) within 255 of them: each is looked up as a client_id,
      // by equality, so SQL or LIKE wildcards find nothing. The 300-character value is not looked up.
      const hostile = ["x'OR'1'='1", "'--", '%', 'client-%', '_____'];
      assert.equal(await grantedScope(`openid ${inactive.clientId} no-such-client ${hostile.join(' ')} ${api.clientId} ${'x'.repeat(300)}`), `openid ${api.clientId}`);
    });

    test("a client's registered scope limits audiences too", async () => {
      const { client: api } = await createTestClient(server.gatehouse.store, { grantTypes: [] });
      assert.equal(await grantedScope(`openid ${api.clientId}`, { scope: 'openid profile' }), 'openid');
    });
  });
}
