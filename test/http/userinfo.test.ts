import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addClient, addUser, basic, mintCode, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

for (const db of DATABASES) {
  describe(`userinfo on ${db.name}`, () => {
    let server: RunningServer;
    let url: string;
    before(async () => {
      server = await startServer(db);
      url = `${server.url}/uas/oauth2/userinfo`;
    });
    after(async () => server.close());

    async function accessToken(scope = 'openid profile email') {
      const store = server.gatehouse.store;
      const { client, secret } = await addClient(store);
      const user = await addUser(store);
      const { code, row } = await mintCode(store, client, user, { scope });
      const response = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) });
      return { token: response.body.access_token as string, refreshToken: response.body.refresh_token as string, auth: { authorization: basic(client.clientId, secret) }, client, user, row };
    }

    test('GET with a Bearer header answers the spec claim set (UI-01, spec UserInfo)', async () => {
      const { token, client, user, row } = await accessToken();
      const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(response.headers.get('access-control-allow-origin'), null, 'no Origin, no CORS (test/http/cors.test.ts)');
      const claims = (await response.json()) as Record<string, unknown>;
      assert.equal(claims.sub, user.id);
      assert.equal(claims.iss, server.issuer);
      assert.equal(claims.aud, client.clientId);
      assert.equal(typeof claims.exp, 'number');
      assert.equal(typeof claims.iat, 'number');
      assert.equal(claims.auth_time, Math.floor(row.authTime / 1000));
      assert.deepEqual(claims.amr, ['pwd']);
      assert.equal(claims.session_index, row.sessionIndex);
      assert.equal(claims.nonce, undefined);
      assert.equal(claims.acr, undefined);
      assert.equal(claims.name, 'Ada Lovelace');
      assert.equal(claims.given_name, 'Ada');
      assert.equal(claims.email, 'ada@example.com');
      assert.equal(typeof claims.updated_at, 'number');
    });

    test('POST with the header, POST with a form body, and a lower-case scheme all work (UI-02/03/11)', async () => {
      const { token } = await accessToken();
      assert.equal((await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status, 200);
      assert.equal((await postForm(url, { access_token: token })).status, 200);
      assert.equal((await fetch(url, { headers: { authorization: `bearer ${token}` } })).status, 200);
    });

    test('scope releases claims: an openid-only token gets no profile or email claims (UI-05)', async () => {
      const { token } = await accessToken('openid');
      const claims = (await (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).json()) as Record<string, unknown>;
      assert.equal(claims.name, undefined);
      assert.equal(claims.email, undefined);
      assert.ok(claims.sub);
    });

    test('no token: 401 with a bare Bearer challenge (UI-07)', async () => {
      const response = await fetch(url);
      assert.equal(response.status, 401);
      const challenge = response.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /^Bearer /);
      assert.doesNotMatch(challenge, /error=/);
    });

    test('an unknown, revoked or refresh token: 401 error="invalid_token" (UI-08)', async () => {
      const bad = await fetch(url, { headers: { authorization: 'Bearer not-a-token' } });
      assert.equal(bad.status, 401);
      assert.match(bad.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      const { token, refreshToken, auth } = await accessToken();
      assert.equal((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status, 200, 'the control: the access token works until revoked');
      assert.equal((await fetch(url, { headers: { authorization: `Bearer ${refreshToken}` } })).status, 401, 'a refresh token is no bearer token');
      assert.equal((await postForm(`${server.url}/uas/oauth2/revocation`, { token }, auth)).status, 200);
      assert.equal((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status, 401);
    });

    test('a token without openid: 403 insufficient_scope (UI-09)', async () => {
      const { token } = await accessToken('profile');
      const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(response.status, 403);
      assert.match(response.headers.get('www-authenticate') ?? '', /error="insufficient_scope", .*scope="openid"/);
    });

    test('a malformed header or the token sent twice: 400 invalid_request (UI-10)', async () => {
      const { token } = await accessToken();
      const malformed = await fetch(url, { headers: { authorization: 'Bearer a b c' } });
      assert.equal(malformed.status, 400);
      assert.match(malformed.headers.get('www-authenticate') ?? '', /error="invalid_request"/);
      const twice = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' }, body: `access_token=${token}` });
      assert.equal(twice.status, 400);
    });
  });
}
