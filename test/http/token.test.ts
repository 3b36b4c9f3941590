import assert from 'node:assert/strict';
import { sessionIdFor } from '../../src/oauth/sid.ts';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { atHash } from '../../src/oauth/issue-tokens.ts';
import { addClient, addUser, basic, mintCode, pkcePair, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

for (const db of DATABASES) {
  describe(`token endpoint, authorization_code grant, on ${db.name}`, () => {
    let server: RunningServer;
    let tokenUrl: string;
    before(async () => {
      server = await startServer(db);
      tokenUrl = `${server.url}/uas/oauth2/token`;
    });
    after(async () => server.close());
    const store = () => server.gatehouse.store;
    const exchange = (form: Record<string, string>, headers: Record<string, string> = {}) => postForm(tokenUrl, { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, ...form }, headers);

    test('a code exchanged with client_secret_basic gives the spec token response with a valid ID token (AC-01..05, IDT-*)', async () => {
      const { client, secret } = await addClient(store());
      const user = await addUser(store());
      const { code, row } = await mintCode(store(), client, user, { nonce: 'n-0S6_WzA2Mj' });
      const response = await exchange({ code }, { authorization: basic(client.clientId, secret) });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.headers.get('pragma'), 'no-cache');
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      const body = response.body;
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.scope, 'openid profile email');
      assert.equal(typeof body.expires_in, 'number');
      assert.equal(body.expires_in, 3600);
      assert.match(body.access_token as string, /^[A-Za-z0-9_-]{43}$/);
      assert.match(body.refresh_token as string, /^[A-Za-z0-9_-]{43}$/);
      const jwks = (await (await fetch(`${server.url}/uas/oauth2/metadata.jwks`)).json()) as { keys: [] };
      const { payload, protectedHeader } = await jwtVerify(body.id_token as string, createLocalJWKSet(jwks), { issuer: server.issuer, audience: client.clientId, algorithms: ['RS256'] });
      assert.equal(protectedHeader.alg, 'RS256');
      assert.ok(protectedHeader.kid);
      assert.equal(payload.sub, user.id);
      assert.equal(payload.azp, client.clientId);
      assert.equal(payload.nonce, 'n-0S6_WzA2Mj');
      assert.equal(payload.auth_time, Math.floor(row.authTime / 1000));
      assert.deepEqual(payload.amr, ['pwd']);
      assert.equal(payload.session_index, row.sessionIndex);
      assert.equal(payload.sid, sessionIdFor(row.sessionIndex, client.clientId), 'the logout specs\' sid (test/http/sid.test.ts)');
      assert.equal(payload.at_hash, atHash(body.access_token as string, 'RS256'));
      assert.equal(payload.acr, undefined, 'no acr unless one is configured');
      assert.equal(payload.email, undefined, 'scope claims belong in UserInfo (IDT-12)');
      assert.ok((payload.exp as number) > (payload.iat as number));
    });

    test('client_secret_post works; Basic credentials are form-urlencoded before base64 (RFC 6749 §2.3.1)', async () => {
      const user = await addUser(store());
      const { client, secret } = await addClient(store());
      const viaPost = await exchange({ code: (await mintCode(store(), client, user)).code, client_id: client.clientId, client_secret: secret });
      assert.equal(viaPost.status, 200);
      const odd = await addClient(store(), { clientId: `odd id:+%/${Date.now()}` });
      const viaBasic = await exchange({ code: (await mintCode(store(), odd.client, user)).code }, { authorization: basic(odd.client.clientId, odd.secret) });
      assert.equal(viaBasic.status, 200, JSON.stringify(viaBasic.body));
    });

    test('client authentication failures are 401 invalid_client with a challenge (TOK-05/06)', async () => {
      const user = await addUser(store());
      const { client, secret } = await addClient(store());
      const { code } = await mintCode(store(), client, user);
      const wrong = await exchange({ code }, { authorization: basic(client.clientId, `${secret}x`) });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error, 'invalid_client');
      assert.match(wrong.headers.get('www-authenticate') ?? '', /^Basic /);
      const invalidClient = (response: { status: number; headers: Headers; body: Record<string, unknown> }, what: string) => {
        assert.deepEqual([response.status, response.body.error], [401, 'invalid_client'], what);
        assert.match(response.headers.get('www-authenticate') ?? '', /^Basic /, what);
      };
      invalidClient(await exchange({ code, client_id: client.clientId, client_secret: `${secret}x` }), 'wrong secret, form');
      invalidClient(await exchange({ code, client_id: 'no-such-client', client_secret: 'x' }), 'unknown client');
      invalidClient(await exchange({ code }), 'no credentials');
      const inactive = await addClient(store(), { active: false });
      invalidClient(await exchange({ code: (await mintCode(store(), inactive.client, user)).code }, { authorization: basic(inactive.client.clientId, inactive.secret) }), 'inactive client');
      invalidClient(await exchange({ code }, { authorization: 'Basic !!!' }), 'malformed Basic');
      for (const hostile of ['\u0000', 'a\u0000b', '\u0007', 'x'.repeat(600)]) {
        invalidClient(await exchange({ code, client_id: hostile, client_secret: 'x' }), JSON.stringify(hostile));
        invalidClient(await exchange({ code }, { authorization: basic(hostile, 'x') }), JSON.stringify(hostile));
      }
      // The control: the code was good all along, and the right secret redeems it.
      assert.equal((await exchange({ code }, { authorization: basic(client.clientId, secret) })).status, 200);
    });

    test('two authentication methods at once, a repeated parameter or a non-form body are invalid_request (TOK-07)', async () => {
      const { client, secret } = await addClient(store());
      const both = await exchange({ code: 'x', client_secret: secret }, { authorization: basic(client.clientId, secret) });
      assert.equal(both.status, 400);
      assert.equal(both.body.error, 'invalid_request');
      const repeated = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, secret) },
        body: `grant_type=authorization_code&code=a&code=b&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
      });
      assert.equal(repeated.status, 400);
      assert.equal(((await repeated.json()) as { error: string }).error, 'invalid_request');
      const json = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: basic(client.clientId, secret) }, body: JSON.stringify({ grant_type: 'authorization_code', code: 'a' }) });
      assert.equal(json.status, 400);
      assert.equal(((await json.json()) as { error: string }).error, 'invalid_request');
      const noBody = await fetch(tokenUrl, { method: 'POST', headers: { authorization: basic(client.clientId, secret) } });
      assert.equal(noBody.status, 400);
    });

    test('grant_type: missing → invalid_request, unknown → unsupported_grant_type, not allowed (password unless registered, refresh_token) → unauthorized_client (TOK-10/11)', async () => {
      const { client, secret } = await addClient(store(), { grantTypes: ['authorization_code'] });
      const auth = { authorization: basic(client.clientId, secret) };
      assert.equal((await postForm(tokenUrl, { code: 'x' }, auth)).body.error, 'invalid_request');
      // The password grant is implemented but opt-in (docs/decisions.md PW1): a client that did not register it may not use it.
      assert.equal((await postForm(tokenUrl, { grant_type: 'password', username: 'a', password: 'b' }, auth)).body.error, 'unauthorized_client');
      assert.equal((await postForm(tokenUrl, { grant_type: 'toString' }, auth)).body.error, 'unsupported_grant_type');
      const refresh = await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: 'x' }, auth);
      assert.equal(refresh.status, 400);
      assert.equal(refresh.body.error, 'unauthorized_client');
    });

    test('code and redirect_uri: missing → invalid_request; unknown, other client, wrong redirect_uri or expired → invalid_grant (AC-10..14)', async () => {
      const user = await addUser(store());
      const a = await addClient(store());
      const b = await addClient(store());
      const authA = { authorization: basic(a.client.clientId, a.secret) };
      assert.equal((await postForm(tokenUrl, { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI }, authA)).body.error, 'invalid_request');
      assert.equal((await postForm(tokenUrl, { grant_type: 'authorization_code', code: (await mintCode(store(), a.client, user)).code }, authA)).body.error, 'invalid_request');
      assert.equal((await exchange({ code: 'not-a-code' }, authA)).body.error, 'invalid_grant');
      const stolen = await exchange({ code: (await mintCode(store(), a.client, user)).code }, { authorization: basic(b.client.clientId, b.secret) });
      assert.equal(stolen.status, 400);
      assert.equal(stolen.body.error, 'invalid_grant');
      const wrongRedirect = await exchange({ code: (await mintCode(store(), a.client, user)).code, redirect_uri: `${REDIRECT_URI}/` }, authA);
      assert.equal(wrongRedirect.body.error, 'invalid_grant');
      const expired = await mintCode(store(), a.client, user, { now: Date.now() - 61_000 });
      assert.equal((await exchange({ code: expired.code }, authA)).body.error, 'invalid_grant');
    });

    test('a second redemption is invalid_grant and revokes every token issued from the code (spec rule, AC-08/09)', async () => {
      const user = await addUser(store());
      const { client, secret } = await addClient(store());
      const auth = { authorization: basic(client.clientId, secret) };
      const { code } = await mintCode(store(), client, user);
      const first = await exchange({ code }, auth);
      assert.equal(first.status, 200);
      const userinfo = () => fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${first.body.access_token as string}` } });
      assert.equal((await userinfo()).status, 200);
      const second = await exchange({ code }, auth);
      assert.equal(second.status, 400);
      assert.equal(second.body.error, 'invalid_grant');
      assert.equal((await userinfo()).status, 401, 'the access token of the first redemption is revoked');
      const introspection = await postForm(`${server.url}/uas/oauth2/introspection`, { token: first.body.access_token as string }, auth);
      assert.deepEqual(introspection.body, { active: false });
      const refresh = await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token as string }, auth);
      assert.equal(refresh.body.error, 'invalid_grant');
    });

    test('PKCE: right verifier succeeds; missing, wrong or unsolicited verifier → invalid_grant; malformed → invalid_request (PK-*)', async () => {
      const user = await addUser(store());
      const { client, secret } = await addClient(store());
      const auth = { authorization: basic(client.clientId, secret) };
      const pair = pkcePair();
      const bound = { codeChallenge: pair.challenge, codeChallengeMethod: 'S256' as const };
      assert.equal((await exchange({ code: (await mintCode(store(), client, user, bound)).code, code_verifier: pair.verifier }, auth)).status, 200);
      assert.equal((await exchange({ code: (await mintCode(store(), client, user, bound)).code }, auth)).body.error, 'invalid_grant');
      assert.equal((await exchange({ code: (await mintCode(store(), client, user, bound)).code, code_verifier: pkcePair().verifier }, auth)).body.error, 'invalid_grant');
      assert.equal((await exchange({ code: (await mintCode(store(), client, user)).code, code_verifier: pair.verifier }, auth)).body.error, 'invalid_grant', 'downgrade: verifier without challenge');
      assert.equal((await exchange({ code: (await mintCode(store(), client, user, bound)).code, code_verifier: 'short' }, auth)).body.error, 'invalid_request');
      const plain = { codeChallenge: pair.verifier, codeChallengeMethod: 'plain' as const };
      assert.equal((await exchange({ code: (await mintCode(store(), client, user, plain)).code, code_verifier: pair.verifier }, auth)).status, 200);
    });

    test('a public client authenticates with client_id only and must not send a secret (AC-15)', async () => {
      const user = await addUser(store());
      const { client } = await addClient(store(), { tokenEndpointAuthMethod: 'none', grantTypes: ['authorization_code', 'refresh_token'] });
      const pair = pkcePair();
      const bound = { codeChallenge: pair.challenge, codeChallengeMethod: 'S256' as const };
      const ok = await exchange({ code: (await mintCode(store(), client, user, bound)).code, client_id: client.clientId, code_verifier: pair.verifier });
      assert.equal(ok.status, 200);
      const withSecret = await exchange({ code: (await mintCode(store(), client, user, bound)).code, client_id: client.clientId, client_secret: 'x', code_verifier: pair.verifier });
      assert.equal(withSecret.status, 401);
      const confidential = await addClient(store());
      const noSecret = await exchange({ code: (await mintCode(store(), confidential.client, user)).code, client_id: confidential.client.clientId });
      assert.equal(noSecret.status, 401);
    });

    test('a registered auth method is enforced (OIDC Core §9)', async () => {
      const user = await addUser(store());
      const { client, secret } = await addClient(store(), { tokenEndpointAuthMethod: 'client_secret_basic' });
      const viaPost = await exchange({ code: (await mintCode(store(), client, user)).code, client_id: client.clientId, client_secret: secret });
      assert.equal(viaPost.status, 401);
    });

    test('no openid scope → no id_token; a client without refresh tokens gets none; the client access token lifetime is honoured', async () => {
      const user = await addUser(store());
      const { client, secret } = await addClient(store(), { refreshTokens: false, accessTokenTtl: 300 });
      const response = await exchange({ code: (await mintCode(store(), client, user, { scope: 'profile' })).code }, { authorization: basic(client.clientId, secret) });
      assert.equal(response.status, 200);
      assert.equal(response.body.id_token, undefined);
      assert.equal(response.body.refresh_token, undefined);
      assert.equal(response.body.expires_in, 300);
      assert.equal(response.body.scope, 'profile');
    });

    test('a code of a user disabled since the login is invalid_grant', async () => {
      const user = await addUser(store());
      const { client, secret } = await addClient(store());
      const { code } = await mintCode(store(), client, user);
      await store().users.update({ ...user, status: 'disabled' });
      assert.equal((await exchange({ code }, { authorization: basic(client.clientId, secret) })).body.error, 'invalid_grant');
    });
  });
}
