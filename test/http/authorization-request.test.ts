/**
 * The authorization request (OIDC Core §3.1.2.1, RFC 6749 §4.1.1): client and redirect_uri
 * checks that never redirect, then every error that goes back to the client (conformance AZ-*).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, createTestClient, pkce, submit } from '../helpers/fixtures.ts';
import { assertErrorPage, assertErrorRedirect, assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

for (const db of DATABASES) {
  describe(`authorization request on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    const base = () => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid' });
    const get = (params: Record<string, string> | [string, string][]) => browse(authorizationUrl(server.url, params));
    const expectError = async (params: Record<string, string> | [string, string][], error: string, state?: string) =>
      assertErrorRedirect(await get(params), { redirectUri: client.redirectUris[0]!, error, state, issuer: server.issuer });

    before(async () => {
      server = await startServer(db);
      ({ client } = await createTestClient(server.gatehouse.store));
    });
    after(async () => server.close());

    test('a valid request without a session shows the login page, not a code (AZ-05)', async () => {
      await assertLoginPage(await get({ ...base(), state: 's1' }));
    });

    test('POST with a form body means the same as GET (AZ-01)', async () => {
      await assertLoginPage(await submit(`${server.url}/uas/oauth2/authorization`, base()));
      const bad = await submit(`${server.url}/uas/oauth2/authorization`, { ...base(), response_type: 'token', state: 'p' });
      assertErrorRedirect(bad, { redirectUri: client.redirectUris[0]!, error: 'unsupported_response_type', state: 'p', issuer: server.issuer });
    });

    test('a JSON body is refused with the error page, not a 5xx', async () => {
      const response = await fetch(`${server.url}/uas/oauth2/authorization`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json' }, body: JSON.stringify(base()) });
      await assertErrorPage(response, 'invalid_request');
    });

    test('missing, unknown, repeated or inactive client_id: the error page, never a redirect (AZ-14)', async () => {
      const { client: inactive } = await createTestClient(server.gatehouse.store, { active: false });
      const { client_id: _, ...noClient } = base();
      // Missing or repeated: a malformed request; unknown or inactive: an unknown application (decision F5).
      for (const params of [noClient, { ...base(), client_id: '' }]) await assertErrorPage(await get(params), 'invalid_request');
      for (const params of [{ ...base(), client_id: 'no-such-client' }, { ...base(), client_id: inactive.clientId }]) await assertErrorPage(await get(params), 'invalid_client');
      await assertErrorPage(await get([...Object.entries(base()), ['client_id', client.clientId]]), 'invalid_request');
      const unknown = await (await get({ ...base(), client_id: 'no-such-client' })).text();
      const disabled = await (await get({ ...base(), client_id: inactive.clientId })).text();
      assert.equal(disabled, unknown, 'an inactive client looks exactly like an unknown one');
    });

    test('missing or repeated redirect_uri: the error page, even with one registered URI (AZ-17)', async () => {
      const { redirect_uri: _, ...noRedirect } = base();
      await assertErrorPage(await get(noRedirect), 'invalid_redirect_uri');
      await assertErrorPage(await get([...Object.entries(base()), ['redirect_uri', client.redirectUris[0]!]]), 'invalid_redirect_uri');
    });

    test('client and redirect_uri are checked before anything else (AZ-19)', async () => {
      await assertErrorPage(await get({ ...base(), redirect_uri: 'https://evil.example/cb', response_type: 'token', prompt: 'none login' }), 'invalid_redirect_uri');
      await assertErrorPage(await get({ ...base(), client_id: 'nope', response_type: 'token' }), 'invalid_client');
    });

    test('a repeated parameter is invalid_request, and a repeated state is not echoed (AZ-04)', async () => {
      for (const name of ['scope', 'response_type', 'nonce', 'prompt', 'code_challenge', 'max_age', 'login_hint', 'ui_locales', 'display', 'acr_values']) {
        await expectError([...Object.entries({ ...base(), state: 'st' }), [name, 'x'], [name, 'y']], 'invalid_request', 'st');
      }
      await expectError([...Object.entries(base()), ['state', 'a'], ['state', 'b']], 'invalid_request');
    });

    test('request objects are not supported (AZ-38, AZ-39)', async () => {
      await expectError({ ...base(), state: 'r', request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported', 'r');
      await expectError({ ...base(), state: 'r', request_uri: 'https://rp.example.test/req.jwt' }, 'request_uri_not_supported', 'r');
    });

    test('response_type missing is invalid_request; anything but code is unsupported_response_type (AZ-22, AZ-23)', async () => {
      const { response_type: _, ...noType } = base();
      await expectError({ ...noType, state: 'x' }, 'invalid_request', 'x');
      for (const type of ['token', 'id_token', 'code id_token', 'code token', 'foo', 'CODE']) await expectError({ ...base(), response_type: type }, 'unsupported_response_type');
    });

    test('a client without the authorization_code grant is unauthorized_client (AZ-24)', async () => {
      const { client: noCode } = await createTestClient(server.gatehouse.store, { grantTypes: ['refresh_token'] });
      const response = await get({ ...base(), client_id: noCode.clientId, state: 'u' });
      assertErrorRedirect(response, { redirectUri: noCode.redirectUris[0]!, error: 'unauthorized_client', state: 'u', issuer: server.issuer });
    });

    test('a malformed scope is invalid_scope; unknown values and an absent scope are accepted (AZ-25)', async () => {
      await expectError({ ...base(), scope: 'openid "quoted"' }, 'invalid_scope');
      await assertLoginPage(await get({ ...base(), scope: 'openid offline_access made-up' }));
      const { scope: _, ...noScope } = base();
      await assertLoginPage(await get(noScope));
    });

    test('PKCE: a public client must send a challenge; an S256 client may not downgrade to plain (PK-06..08)', async () => {
      const { client: publicClient } = await createTestClient(server.gatehouse.store, { tokenEndpointAuthMethod: 'none', grantTypes: ['authorization_code'] });
      const publicBase = { ...base(), client_id: publicClient.clientId };
      assertErrorRedirect(await get({ ...publicBase, state: 'p' }), { redirectUri: publicClient.redirectUris[0]!, error: 'invalid_request', state: 'p', issuer: server.issuer });
      await assertLoginPage(await get({ ...publicBase, code_challenge: pkce().challenge, code_challenge_method: 'S256' }));

      const { client: s256 } = await createTestClient(server.gatehouse.store, { codeChallengeMethod: 'S256' });
      const s256Base = { ...base(), client_id: s256.clientId };
      const plain = 'a'.repeat(50);
      for (const params of [s256Base, { ...s256Base, code_challenge: plain, code_challenge_method: 'plain' }, { ...s256Base, code_challenge: pkce().challenge, code_challenge_method: 'S512' }]) {
        assertErrorRedirect(await get(params), { redirectUri: s256.redirectUris[0]!, error: 'invalid_request', issuer: server.issuer });
      }
      // Without a method the registered S256 applies (RFC 7636 §4.3 default: the client's, else plain).
      await assertLoginPage(await get({ ...s256Base, code_challenge: pkce().challenge }));
      await expectError({ ...base(), code_challenge: 'short' }, 'invalid_request');
      await expectError({ ...base(), code_challenge_method: 'S256' }, 'invalid_request');
    });

    test('prompt=none with another value is invalid_request; unknown prompt values are ignored (AZ-32)', async () => {
      await expectError({ ...base(), prompt: 'none login', state: 'q' }, 'invalid_request', 'q');
      await expectError({ ...base(), prompt: 'none whatever' }, 'invalid_request');
      await assertLoginPage(await get({ ...base(), prompt: 'whatever' }));
      for (const prompt of ['login', 'consent', 'select_account']) await assertLoginPage(await get({ ...base(), prompt }));
    });

    test('prompt=none without a session is login_required, with the state (AZ-29)', async () => {
      await expectError({ ...base(), prompt: 'none', state: 'n' }, 'login_required', 'n');
    });

    test('max_age must be a non-negative whole number', async () => {
      for (const maxAge of ['-1', 'abc', '1.5', '1e3', '99999999999']) await expectError({ ...base(), max_age: maxAge }, 'invalid_request');
      await assertLoginPage(await get({ ...base(), max_age: '3600' }));
    });

    test('over-long parameters are invalid_request; an over-long state is not echoed', async () => {
      await expectError({ ...base(), state: 'k', nonce: 'n'.repeat(513) }, 'invalid_request', 'k');
      await assertLoginPage(await get({ ...base(), nonce: 'n'.repeat(512) }));
      await expectError({ ...base(), login_hint: 'h'.repeat(2049) }, 'invalid_request');
      await expectError({ ...base(), state: 's'.repeat(2049) }, 'invalid_request');
    });

    test('response_mode: query, fragment and form_post are served; any other is invalid_request by query (RM-06; test/http/response-modes.test.ts has the rest)', async () => {
      for (const mode of ['query', 'fragment', 'form_post']) await assertLoginPage(await get({ ...base(), response_mode: mode }));
      for (const mode of ['query.jwt', 'form_post.jwt', 'Query']) await expectError({ ...base(), response_mode: mode, state: 'm' }, 'invalid_request', 'm');
    });

    test('an id_token_hint we did not sign is invalid_request', async () => {
      await expectError({ ...base(), id_token_hint: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' }, 'invalid_request');
    });

    test('a state of 128 characters with -._~ is echoed byte for byte in an error redirect (AZ-07)', async () => {
      const state = 'Az09-._~'.repeat(16);
      const params = await expectError({ ...base(), response_type: 'token', state }, 'unsupported_response_type', state);
      assert.equal(params.get('state'), state);
    });

    test('an empty parameter counts as absent; unknown parameters are ignored (AZ-02, AZ-04)', async () => {
      await expectError({ ...base(), response_type: 'token', state: '' }, 'unsupported_response_type');
      await assertLoginPage(await get({ ...base(), extra: 'foobar', claims_locales: 'fi', nonce: '' }));
    });

    test('a registered redirect URI with a query keeps it in error redirects (AZ-10)', async () => {
      const { client: withQuery } = await createTestClient(server.gatehouse.store, { redirectUris: ['https://rp.example.test/cb?tenant=a&x=1'] });
      const response = await get({ ...base(), client_id: withQuery.clientId, redirect_uri: 'https://rp.example.test/cb?tenant=a&x=1', response_type: 'token', state: 'q' });
      const params = assertErrorRedirect(response, { redirectUri: 'https://rp.example.test/cb?tenant=a&x=1', error: 'unsupported_response_type', state: 'q', issuer: server.issuer });
      assert.equal(params.get('tenant'), 'a');
      assert.equal(params.get('x'), '1');
    });

    test('optional OIDC parameters never cause an error (AZ-09)', async () => {
      for (const [name, value] of [['display', 'wap'], ['display', 'popup'], ['ui_locales', 'de fi'], ['login_hint', 'someone'], ['acr_values', 'urn:unknown'], ['claims_locales', 'sv']]) {
        await assertLoginPage(await get({ ...base(), [name!]: value! }));
      }
    });

    test('hostile input never produces a 5xx', async () => {
      const nasty = ['%', '\u0000', '\ud800', '<script>', '"\'', '../../', 'a'.repeat(5000), '\r\nSet-Cookie: x=y', '%E0%A4%A'];
      for (const value of nasty) {
        for (const name of ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'prompt', 'max_age', 'ui_locales', 'code_challenge']) {
          const response = await get({ ...base(), [name]: value });
          assert.ok(response.status < 500, `${name}=${JSON.stringify(value.slice(0, 20))} gave ${response.status}`);
          await response.body?.cancel();
        }
      }
      for (const name of ['nonce', 'login_hint', 'acr_values', 'display']) await expectError({ ...base(), state: 'c', [name]: 'a\u0000b' }, 'invalid_request', 'c');
      const raw = await fetch(`${server.url}/uas/oauth2/authorization?client_id=%&redirect_uri=%zz&state=%E0%A4%A`, { redirect: 'manual' });
      assert.ok(raw.status < 500);
    });
  });
}
