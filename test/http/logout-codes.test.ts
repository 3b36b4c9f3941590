import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { CookieJar, createTestClient, createTestUser, loginThroughForm, logoutConfirmed, redirectParams, RP_REDIRECT_URI } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

for (const db of DATABASES) {
  describe(`logout and the session's codes, on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db);
    });
    after(async () => server.close());

    /** Logs a new browser in through the form and returns its code, unredeemed, with what redeems it. */
    async function codeFromLogin() {
      const store = server.gatehouse.store;
      const { client, clientSecret } = await createTestClient(store);
      const user = await createTestUser(store, { password: 'correct horse battery' });
      const jar = new CookieJar();
      const redirect = await loginThroughForm({ baseUrl: server.url, jar }, { response_type: 'code', client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, scope: 'openid' }, { username: user.username, password: 'correct horse battery' });
      const code = redirectParams(redirect).get('code');
      assert.ok(code);
      const redeem = () => postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: RP_REDIRECT_URI }, { authorization: basic(client.clientId, clientSecret) });
      return { jar, redeem };
    }

    test('a code issued before an RP-initiated logout cannot be redeemed after it; the same login without the logout redeems its code (conformance RT-10)', async () => {
      // The control: the same login, no logout, and the code redeems.
      const control = await codeFromLogin();
      const redeemed = await control.redeem();
      assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));

      const { jar, redeem } = await codeFromLogin();
      const logout = await logoutConfirmed(server.url, jar);
      assert.equal(logout.status, 200, `logout answered ${logout.status}`);
      assert.equal(jar.cookies.get('gatehouse_session'), undefined, 'the session cookie was cleared');
      const exchange = await redeem();
      assert.equal(exchange.status, 400);
      assert.equal(exchange.body.error, 'invalid_grant');
    });

    test('Basic credentials of one client with another client_id in the body: 401 invalid_client (conformance AC-11)', async () => {
      const a = await createTestClient(server.gatehouse.store);
      const b = await createTestClient(server.gatehouse.store);
      const response = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code: 'x', redirect_uri: RP_REDIRECT_URI, client_id: b.client.clientId }, { authorization: basic(a.client.clientId, a.clientSecret) });
      assert.equal(response.status, 401);
      assert.equal(response.body.error, 'invalid_client');
      assert.match(response.headers.get('www-authenticate') ?? '', /^Basic /);
    });
  });
}
