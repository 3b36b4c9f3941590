/**
 * Conformance: the token endpoint (RFC 6749 §3.2, §4.1.3, §5; research/conformance.md §2.9-2.10
 * TOK-*, AC-*) over HTTP, with the OIDF code-reuse and client_secret_post modules. Codes come from
 * the real login where the module needs one, else from the back-channel fixtures; time moves on a
 * ManualClock. docs/conformance.md maps the rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { addClient, addUser, basic, mintCode, pkcePair, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestClient, createTestUser, ERROR_TEXT } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { assertTokenResponse, authorize, clockAtNow, codeRequest, CookieJar, redeem, userInfo, verifyIdToken } from './helpers.ts';

const PASSWORD = 'conformance token 1';

/** A token error as RFC 6749 §5.2 shapes it: JSON, never cached, allowed ASCII only (TOK-09). */
function assertTokenError(response: { status: number; headers: Headers; body: Record<string, unknown> }, status: number, error: string): void {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(response.body.error, error);
  assert.match(response.body.error as string, ERROR_TEXT);
  if (response.body.error_description !== undefined) assert.match(response.body.error_description as string, ERROR_TEXT);
  for (const name of Object.keys(response.body)) assert.ok(['error', 'error_description', 'error_uri'].includes(name), `unexpected member ${name}`);
  if (status === 401) assert.match(response.headers.get('www-authenticate') ?? '', /^Basic /);
}

for (const db of DATABASES) {
  describe(`conformance: token endpoint on ${db.name}`, () => {
    const clock = clockAtNow();
    let server: RunningServer;
    let tokenUrl: string;
    let client: Client;
    let secret: string;
    let user: User;
    const store = () => server.gatehouse.store;
    const auth = () => ({ authorization: basic(client.clientId, secret) });
    const mint = (overrides: Parameters<typeof mintCode>[3] = {}) => mintCode(store(), client, user, { now: clock.now(), ...overrides });

    before(async () => {
      server = await startServer(db, { clock });
      tokenUrl = `${server.url}/uas/oauth2/token`;
      ({ client, secret } = await addClient(store()));
      user = await addUser(store());
    });
    after(async () => server.close());

    test('only POST: other methods on the token, introspection and revocation endpoints are 405 with Allow: POST (TOK-01, INT-01)', async () => {
      for (const endpoint of ['token', 'introspection', 'revocation']) {
        for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
          const response = await fetch(`${server.url}/uas/oauth2/${endpoint}?grant_type=authorization_code`, { method, headers: auth() });
          assert.equal(response.status, 405, `${method} ${endpoint}`);
          assert.equal(response.headers.get('allow'), 'POST');
          assert.equal(response.headers.get('cache-control'), 'no-store');
          const body = (await response.json()) as Record<string, string>;
          assert.equal(body.error, 'invalid_request');
          assert.match(body.error_description!, ERROR_TEXT);
        }
      }
    });

    test('client credentials in the query string are not read: 401 invalid_client and no tokens (TOK-01)', async () => {
      const { code } = await mint();
      const response = await postForm(`${tokenUrl}?${new URLSearchParams({ client_id: client.clientId, client_secret: secret })}`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
      assertTokenError({ ...response, headers: response.headers }, 401, 'invalid_client');
      assert.equal(response.body.access_token, undefined);
      // The control: the same credentials in the body redeem the same code.
      assertTokenResponse(await postForm(tokenUrl, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: client.clientId, client_secret: secret }));
    });

    test('unknown parameters are ignored and empty values count as absent (TOK-02)', async () => {
      const extra = await postForm(tokenUrl, { grant_type: 'authorization_code', code: (await mint()).code, redirect_uri: REDIRECT_URI, foo: 'bar', resource_hint: 'x' }, auth());
      assertTokenResponse(extra);
      const empty = await postForm(tokenUrl, { grant_type: 'authorization_code', code: (await mint()).code, redirect_uri: REDIRECT_URI, code_verifier: '', client_secret: '', scope: '' }, auth());
      const body = assertTokenResponse(empty);
      assert.equal(body.scope, 'openid profile email');
      const refreshed = await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: body.refresh_token as string, scope: '' }, auth());
      assert.equal(assertTokenResponse(refreshed).scope, 'openid profile email', 'an empty scope is the original scope');
    });

    test('client_secret_basic: a client_id and secret holding : + % / and a space are form-urlencoded before base64, and decoded (TOK-03)', async () => {
      const oddSecret = 'p: +%/é s3cret';
      const odd = await addClient(store(), { clientId: `c:+% /${Date.now()}`, secretHash: hashSecret(oddSecret) });
      const { code } = await mintCode(store(), odd.client, user, { now: clock.now() });
      const encoded = `Basic ${Buffer.from(`${encodeURIComponent(odd.client.clientId).replace(/%20/g, '+')}:${encodeURIComponent(oddSecret).replace(/%20/g, '+')}`).toString('base64')}`;
      assertTokenResponse(await postForm(tokenUrl, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: encoded }));
    });

    test('oidcc-server-client-secret-post: the happy flow with client_id and client_secret in the body (module 32; TOK-04)', async () => {
      const rp = await createTestClient(store(), { tokenEndpointAuthMethod: 'client_secret_post' });
      const person = await createTestUser(store(), { password: PASSWORD });
      const { code } = await authorize(server, new CookieJar(), codeRequest(rp.client), { username: person.username, password: PASSWORD }, { expectLogin: true });
      const body = assertTokenResponse(await redeem(server, rp.client, rp.clientSecret, code, { method: 'post' }));
      const { payload } = await verifyIdToken(server, body.id_token as string);
      assert.equal(payload.aud, rp.client.clientId);
      assert.equal((await userInfo(server, body.access_token as string)).body.sub, person.id);
    });

    test('every token error is JSON, no-store, 400 (401 with a Basic challenge for invalid_client), with only allowed ASCII even when a hostile value is echoed (TOK-09, TOK-10, AZ-28)', async () => {
      const hostile = 'ü"\\<x>\u2028';
      assertTokenError(await postForm(tokenUrl, { code: 'x' }, auth()), 400, 'invalid_request');
      assertTokenError(await postForm(tokenUrl, { grant_type: hostile }, auth()), 400, 'unsupported_grant_type');
      assertTokenError(await postForm(tokenUrl, { grant_type: 'urn:ietf:params:oauth:grant-type:saml2-bearer' }, auth()), 400, 'unsupported_grant_type');
      assertTokenError(await postForm(tokenUrl, { grant_type: 'authorization_code', code: hostile, redirect_uri: REDIRECT_URI }, auth()), 400, 'invalid_grant');
      assertTokenError(await postForm(tokenUrl, { grant_type: 'authorization_code', code: (await mint()).code, redirect_uri: hostile }, auth()), 400, 'invalid_grant');
      assertTokenError(await postForm(tokenUrl, { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, hostile) }), 401, 'invalid_client');
      const codeOnly = await addClient(store(), { grantTypes: ['authorization_code'] });
      assertTokenError(await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(codeOnly.client.clientId, codeOnly.secret) }), 400, 'unauthorized_client');
      const granted = assertTokenResponse(await redeem(server, client, secret, (await mint({ scope: 'openid' })).code, { redirectUri: REDIRECT_URI }));
      assertTokenError(await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: granted.refresh_token as string, scope: `openid ${hostile}` }, auth()), 400, 'invalid_scope');
      const repeated = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth() }, body: 'grant_type=authorization_code&grant_type=refresh_token' });
      assertTokenError({ status: repeated.status, headers: repeated.headers, body: (await repeated.json()) as Record<string, unknown> }, 400, 'invalid_request');
    });

    test('oidcc-codereuse-30seconds: 30 s later the code is invalid_grant and the first access token is refused by UserInfo (module 29; AC-09)', async () => {
      const { code } = await mint();
      const first = assertTokenResponse(await redeem(server, client, secret, code, { redirectUri: REDIRECT_URI }));
      assert.equal((await userInfo(server, first.access_token as string)).status, 200);
      clock.advance(30_000);
      assertTokenError(await redeem(server, client, secret, code, { redirectUri: REDIRECT_URI }), 400, 'invalid_grant');
      const refused = await userInfo(server, first.access_token as string);
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    });

    test('a code first used after its lifetime is invalid_grant; one second before the end it works (AC-14, AZ-13)', async () => {
      // Codes issued by the real authorization endpoint, so the lifetime is the server's (GATEHOUSE_CODE_TTL).
      const rp = await createTestClient(store());
      const person = await createTestUser(store(), { password: PASSWORD });
      const jar = new CookieJar();
      const issue = async () => (await authorize(server, jar, codeRequest(rp.client), { username: person.username, password: PASSWORD })).code;
      const late = await issue();
      const inTime = await issue();
      const lifetime = server.config.codeTtl * 1000;
      assert.ok(lifetime <= 600_000, 'codes live at most 10 minutes');
      clock.advance(lifetime - 1000);
      assertTokenResponse(await redeem(server, rp.client, rp.clientSecret, inTime));
      clock.advance(1000);
      assertTokenError(await redeem(server, rp.client, rp.clientSecret, late), 400, 'invalid_grant');
    });

    test("another client's id with this client's secret is 401 invalid_client; another client with its own secret gets invalid_grant (AC-10, AC-11)", async () => {
      const other = await addClient(store());
      const { code } = await mint();
      const mixed = await postForm(tokenUrl, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: other.client.clientId, client_secret: secret });
      assert.equal(mixed.status, 401);
      assert.equal(mixed.body.error, 'invalid_client');
      const stolen = await redeem(server, other.client, other.secret, (await mint()).code, { redirectUri: REDIRECT_URI });
      assertTokenError(stolen, 400, 'invalid_grant');
    });

    test("a public client redeeming another public client's code gets invalid_grant; without client_id it is 401 invalid_client (AC-15)", async () => {
      const a = await addClient(store(), { tokenEndpointAuthMethod: 'none' });
      const b = await addClient(store(), { tokenEndpointAuthMethod: 'none' });
      const pair = pkcePair();
      const bound = { now: clock.now(), codeChallenge: pair.challenge, codeChallengeMethod: 'S256' as const };
      const form = (code: string) => ({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: pair.verifier });
      assertTokenError(await postForm(tokenUrl, { ...form((await mintCode(store(), a.client, user, bound)).code), client_id: b.client.clientId }), 400, 'invalid_grant');
      const anonymous = await postForm(tokenUrl, form((await mintCode(store(), a.client, user, bound)).code));
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.error, 'invalid_client');
      assertTokenResponse(await postForm(tokenUrl, { ...form((await mintCode(store(), a.client, user, bound)).code), client_id: a.client.clientId }));
    });
  });
}
