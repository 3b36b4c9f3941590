/**
 * Conformance: discovery metadata and the JWK Set (OIDC Discovery §3-4, RFC 8414, RFC 7517;
 * research/conformance.md §2.1-2.2 DISC-*, JWKS-*), including the OIDF rotate-keys module and an
 * https issuer as production runs it behind a TLS-terminating proxy. docs/conformance.md maps the rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { addClient, addUser, basic, mintCode, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, createTestClient } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { assertTokenResponse, verifyIdToken } from './helpers.ts';

/** Every metadata name registered by OIDC Discovery §3, RFC 8414 §2, RFC 9207 §3, RFC 8628 §4 and the OIDC logout specifications. */
const REGISTERED_METADATA = new Set([
  'issuer', 'authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'registration_endpoint', 'scopes_supported',
  'response_types_supported', 'response_modes_supported', 'grant_types_supported', 'acr_values_supported', 'subject_types_supported',
  'id_token_signing_alg_values_supported', 'id_token_encryption_alg_values_supported', 'id_token_encryption_enc_values_supported',
  'userinfo_signing_alg_values_supported', 'userinfo_encryption_alg_values_supported', 'userinfo_encryption_enc_values_supported',
  'request_object_signing_alg_values_supported', 'request_object_encryption_alg_values_supported', 'request_object_encryption_enc_values_supported',
  'token_endpoint_auth_methods_supported', 'token_endpoint_auth_signing_alg_values_supported', 'display_values_supported', 'claim_types_supported',
  'claims_supported', 'service_documentation', 'claims_locales_supported', 'ui_locales_supported', 'claims_parameter_supported',
  'request_parameter_supported', 'request_uri_parameter_supported', 'require_request_uri_registration', 'op_policy_uri', 'op_tos_uri',
  'revocation_endpoint', 'revocation_endpoint_auth_methods_supported', 'revocation_endpoint_auth_signing_alg_values_supported',
  'introspection_endpoint', 'introspection_endpoint_auth_methods_supported', 'introspection_endpoint_auth_signing_alg_values_supported',
  'code_challenge_methods_supported', 'authorization_response_iss_parameter_supported', 'end_session_endpoint', 'check_session_iframe',
  'frontchannel_logout_supported', 'frontchannel_logout_session_supported', 'backchannel_logout_supported', 'backchannel_logout_session_supported',
  'device_authorization_endpoint',
]);
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
/** A BCP 47 language tag, in the shape the suite checks (language, optional script/region/variants). */
const LANGUAGE_TAG = /^[a-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-[A-Za-z0-9]{5,8})*$/;

const metadataOf = async (server: RunningServer) => {
  const response = await fetch(`${server.url}/uas/.well-known/openid-configuration`);
  return { response, metadata: (await response.json()) as Record<string, unknown> };
};
const jwksOf = async (server: RunningServer) => ((await (await fetch(`${server.url}/uas/oauth2/metadata.jwks`)).json()) as { keys: Record<string, unknown>[] }).keys;

const [sqlite] = DATABASES;

describe('conformance: discovery metadata on sqlite', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer(sqlite!);
  });
  after(async () => server.close());

  test('metadata tells the truth: the scopes that have an effect, the auth methods, request objects and claims off, iss on; every member registered, locales BCP 47 (DISC-07, DISC-09, DISC-11, DISC-13)', async () => {
    const { metadata: m } = await metadataOf(server);
    for (const name of Object.keys(m)) assert.ok(REGISTERED_METADATA.has(name), `unregistered or misspelled member ${name}`);
    assert.deepEqual(m.scopes_supported, ['openid', 'profile', 'email'], 'offline_access, address and phone are dropped, so not advertised');
    // No GATEHOUSE_KEY_ENCRYPTION_KEY here, so no client_secret_jwt and no HS256 (issue 22, item 6).
    assert.deepEqual(m.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none']);
    assert.deepEqual(m.introspection_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'private_key_jwt'], 'public clients may not introspect');
    assert.deepEqual(m.token_endpoint_auth_signing_alg_values_supported, ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'], 'never none');
    assert.equal(m.request_parameter_supported, false);
    assert.equal(m.request_uri_parameter_supported, false);
    assert.equal(m.claims_parameter_supported, false);
    assert.equal(m.authorization_response_iss_parameter_supported, true);
    assert.deepEqual(m.response_modes_supported, ['query', 'fragment', 'form_post']);
    for (const tag of m.ui_locales_supported as string[]) assert.match(tag, LANGUAGE_TAG);
    assert.equal(m.request_object_signing_alg_values_supported, undefined, 'so the suite runs the request-object modules, which we answer with *_not_supported');

    // The flags match the behaviour: request objects are refused, a public client cannot introspect.
    const { client } = await createTestClient(server.gatehouse.store);
    const refused = await browse(authorizationUrl(server.url, { response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUris[0]!, scope: 'openid', request: 'e30.e30.' }));
    assert.equal(new URL(refused.headers.get('location')!).searchParams.get('error'), 'request_not_supported');
    const publicClient = await addClient(server.gatehouse.store, { tokenEndpointAuthMethod: 'none' });
    assert.equal((await postForm(`${server.url}/uas/oauth2/introspection`, { token: 'x', client_id: publicClient.client.clientId })).status, 401);
  });
});

describe('conformance: an https issuer (production behind a TLS-terminating proxy) on sqlite', () => {
  let server: RunningServer;
  const issuer = 'https://sso.example.test/uas';
  before(async () => {
    server = await startServer(sqlite!, { env: { GATEHOUSE_ISSUER: issuer } });
  });
  after(async () => server.close());

  test('the issuer and every endpoint and jwks_uri are https under it, HSTS is sent, cookies are Secure; an issuer with a query or fragment is refused at startup (DISC-03, DISC-12, SEC-01)', async () => {
    const { response, metadata } = await metadataOf(server);
    assert.equal(metadata.issuer, issuer);
    const url = new URL(metadata.issuer as string);
    assert.equal(url.protocol, 'https:');
    assert.equal(url.search, '');
    assert.equal(url.hash, '');
    const endpoints = Object.entries(metadata).filter(([name]) => name.endsWith('_endpoint') || name === 'jwks_uri');
    assert.deepEqual(endpoints.map(([name]) => name).sort(), ['authorization_endpoint', 'device_authorization_endpoint', 'end_session_endpoint', 'introspection_endpoint', 'jwks_uri', 'revocation_endpoint', 'token_endpoint', 'userinfo_endpoint']);
    for (const [name, value] of endpoints) assert.ok((value as string).startsWith(`${issuer}/`), `${name} ${String(value)}`);
    assert.match(response.headers.get('strict-transport-security') ?? '', /max-age=\d+/);

    const { client } = await createTestClient(server.gatehouse.store);
    const page = await browse(authorizationUrl(server.url, { response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUris[0]!, scope: 'openid' }));
    assert.equal(page.status, 200);
    const cookies = page.headers.getSetCookie();
    assert.ok(cookies.length > 0);
    for (const cookie of cookies) assert.match(cookie, /; Secure/i, cookie);

    for (const bad of [`${issuer}?tenant=a`, `${issuer}#x`, `${issuer}/`]) assert.throws(() => loadConfig({ GATEHOUSE_ISSUER: bad }), /GATEHOUSE_ISSUER/);
  });
});

for (const db of DATABASES) {
  describe(`conformance: JWKS and key rotation on ${db.name}`, () => {
    let server: RunningServer;
    const clock = new ManualClock(Date.now());
    before(async () => {
      server = await startServer(db, { clock });
    });
    after(async () => server.close());

    const idToken = async () => {
      const { client, secret } = await addClient(server.gatehouse.store);
      const { code } = await mintCode(server.gatehouse.store, client, await addUser(server.gatehouse.store), { now: clock.now() });
      const body = assertTokenResponse(await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) }));
      return body.id_token as string;
    };

    test('oidcc-server-rotate-keys: after a rotation the JWKS has the new and the old key, distinct kids, public members only; new ID tokens carry the new kid and old ones still verify (JWKS-01..04, JWKS-06, JWKS-07)', async () => {
      const before = await jwksOf(server);
      const rs256 = (keys: Record<string, unknown>[]) => keys.filter((k) => k.alg === 'RS256');
      const others = (keys: Record<string, unknown>[]) => keys.filter((k) => k.alg !== 'RS256');
      assert.equal(rs256(before).length, 1);
      const oldToken = await idToken();
      const oldKid = (await verifyIdToken(server, oldToken)).header.kid;
      assert.equal(oldKid, rs256(before)[0]!.kid);

      const rotated = await server.gatehouse.deps.keyRing.rotate('RS256');
      const keys = await jwksOf(server);
      assert.deepEqual(rs256(keys).map((k) => k.kid).sort(), [oldKid, rotated.kid].sort());
      // Each algorithm rotates on its own (AL-03): the other algorithms' keys are as they were.
      assert.deepEqual(others(keys), others(before));
      assert.equal(new Set(keys.map((k) => k.kid)).size, keys.length, 'kids are distinct');
      for (const key of rs256(keys)) {
        assert.equal(key.kty, 'RSA');
        assert.equal(key.use, 'sig');
        assert.ok(typeof key.kid === 'string' && key.kid !== '');
        for (const member of PRIVATE_MEMBERS) assert.equal(key[member], undefined, `${String(key.kid)} has ${member}`);
      }
      // Publish first, sign later (OIDC Core §10.1.1): the old key signs for two key-cache periods.
      assert.equal((await verifyIdToken(server, await idToken())).header.kid, oldKid);
      clock.advance(2 * server.config.keyCacheTtl * 1000);
      const newToken = await idToken();
      assert.equal((await verifyIdToken(server, newToken)).header.kid, rotated.kid);
      await verifyIdToken(server, oldToken);
    });
  });
}
