import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHmac, randomUUID } from 'node:crypto';
import type { Client } from '../../src/domain/client.ts';
import { addClient, addUser, basic, mintCode, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestUser, loginThroughForm, redirectParams } from '../helpers/fixtures.ts';
import { manageCall, manageTokens } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { addKeyClient, addSecretJwtClient, assertionFields, keyAssertion, secretAssertion, signingKey, TEST_KEK } from '../helpers/client-assertions.ts';

const PASSWORD = 'discovery password 1';
/** Registered values a client might ask for (IANA OAuth Parameters, OIDC Core), whether or not gatehouse serves them. */
const KNOWN_GRANT_TYPES = [
  'authorization_code', 'refresh_token', 'client_credentials', 'password', 'implicit', 'urn:ietf:params:oauth:grant-type:device_code',
  'urn:ietf:params:oauth:grant-type:jwt-bearer', 'urn:ietf:params:oauth:grant-type:saml2-bearer', 'urn:ietf:params:oauth:grant-type:token-exchange', 'urn:openid:params:grant-type:ciba',
];
const KNOWN_RESPONSE_TYPES = ['code', 'token', 'id_token', 'code token', 'code id_token', 'id_token token', 'code id_token token', 'none'];
const KNOWN_RESPONSE_MODES = ['query', 'fragment', 'form_post', 'query.jwt', 'fragment.jwt', 'form_post.jwt', 'jwt'];
const KNOWN_CHALLENGE_METHODS = ['S256', 'plain', 'S384', 'S512'];
const KNOWN_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none', 'client_secret_jwt', 'private_key_jwt', 'tls_client_auth', 'self_signed_tls_client_auth'];
const KNOWN_SCOPES = ['openid', 'profile', 'email', 'address', 'phone', 'offline_access'];
const KNOWN_LOCALES = ['en', 'fi', 'sv', 'de', 'fr', 'nb', 'da', 'et'];

/** The values among `known` and `advertised` for which `works` says yes, in the order advertised first. */
async function servedOf(advertised: string[], known: string[], works: (value: string) => Promise<boolean>): Promise<string[]> {
  const served: string[] = [];
  for (const value of [...new Set([...advertised, ...known])]) if (await works(value)) served.push(value);
  return served;
}

/** A client_secret_jwt assertion (RFC 7523 §3), HS256 with the client's secret. */
function hs256Assertion(clientId: string, secret: string, audience: string): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signingInput = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iss: clientId, sub: clientId, aud: audience, jti: randomUUID(), iat: now, exp: now + 60 })}`;
  return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
}

/** Whether a client authenticating to `endpoint` with `method` is let in (the request is then refused for its bogus token, not its credentials). */
async function authenticates(server: RunningServer, endpoint: 'token' | 'introspection' | 'revocation', method: string): Promise<boolean> {
  const store = () => server.gatehouse.store;
  const url = `${server.url}/uas/oauth2/${endpoint}`;
  const form: Record<string, string> = endpoint === 'token' ? { grant_type: 'refresh_token', refresh_token: 'not-a-token' } : { token: 'not-a-token' };
  const confidential = await addClient(store());
  const { client: publicClient } = await addClient(store(), { tokenEndpointAuthMethod: 'none' });
  const { clientId } = confidential.client;
  const response =
    method === 'client_secret_basic'
      ? await postForm(url, form, { authorization: basic(clientId, confidential.secret) })
      : method === 'client_secret_post'
        ? await postForm(url, { ...form, client_id: clientId, client_secret: confidential.secret })
        : method === 'none'
          ? await postForm(url, { ...form, client_id: publicClient.clientId })
          : method === 'client_secret_jwt'
            ? await (async () => {
                const jwtClient = await addSecretJwtClient(store());
                return postForm(url, { ...form, ...assertionFields(await secretAssertion(jwtClient.secret, jwtClient.client.clientId, url)) });
              })()
            : method === 'private_key_jwt'
              ? await (async () => {
                  const key = await signingKey();
                  const keyClient = await addKeyClient(store(), { keys: [key] });
                  return postForm(url, { ...form, ...assertionFields(await keyAssertion(key, keyClient.clientId, url)) });
                })()
              : // Any other method: the nearest a client of ours can come (an HS256 assertion by a client registered for the secret methods).
                await postForm(url, { ...form, client_id: clientId, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: hs256Assertion(clientId, confidential.secret, url) });
  if (response.status === 401) {
    assert.equal(response.body.error, 'invalid_client', `${endpoint} ${method}`);
    return false;
  }
  if (endpoint === 'token') assert.deepEqual([response.status, response.body.error], [400, 'invalid_grant'], `${endpoint} ${method}`);
  if (endpoint === 'introspection') assert.deepEqual([response.status, response.body], [200, { active: false }], `${endpoint} ${method}`);
  if (endpoint === 'revocation') assert.equal(response.status, 200, `${endpoint} ${method}`);
  return true;
}

/**
 * The auth methods a client can be registered with through the management API, among `methods`:
 * 201, or 400 naming token_endpoint_auth_method. private_key_jwt comes with an inline key set.
 */
async function registrable(server: RunningServer, methods: string[]): Promise<string[]> {
  const tokens = await manageTokens(server);
  const key = await signingKey();
  const accepted: string[] = [];
  for (const method of methods) {
    const body = { client_name: `registers ${method}`, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: method, ...(method === 'private_key_jwt' ? { jwks: { keys: [key.publicJwk] } } : {}) };
    const response = await manageCall(server, 'POST', '/clients', { token: tokens.admin, body });
    if (response.status === 201) accepted.push(method);
    else assert.deepEqual([response.status, response.json.errors?.[0]?.field], [400, 'token_endpoint_auth_method'], `${method}: ${response.text}`);
  }
  return accepted;
}

/** At each endpoint, the methods a client authenticates with (every known and every advertised one tried) are exactly the advertised ones. */
async function assertAuthMethodsAsAdvertised(server: RunningServer): Promise<void> {
  const metadata = (await (await fetch(`${server.url}/uas/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
  for (const endpoint of ['token', 'introspection', 'revocation'] as const) {
    const advertised = metadata[`${endpoint}_endpoint_auth_methods_supported`]!;
    assert.deepEqual(await servedOf(advertised, KNOWN_AUTH_METHODS, (method) => authenticates(server, endpoint, method)), advertised, endpoint);
  }
}

/** The methods a client can be registered with (every known and every advertised one tried) are exactly token_endpoint_auth_methods_supported. */
async function assertRegistrableAsAdvertised(server: RunningServer): Promise<void> {
  const advertised = ((await (await fetch(`${server.url}/uas/.well-known/openid-configuration`)).json()) as Record<string, string[]>).token_endpoint_auth_methods_supported!;
  assert.deepEqual(await registrable(server, [...new Set([...advertised, ...KNOWN_AUTH_METHODS])]), advertised);
}

/** The whole metadata document this server serves, with or without a key-encryption key: what is implemented and usable, exactly. */
function expectedMetadata(server: RunningServer, { keyEncryptionKey }: { keyEncryptionKey: boolean }): Record<string, unknown> {
  const base = `${server.url}/uas/oauth2`;
  return {
    issuer: `${server.url}/uas`,
    authorization_endpoint: `${base}/authorization`,
    token_endpoint: `${base}/token`,
    userinfo_endpoint: `${base}/userinfo`,
    introspection_endpoint: `${base}/introspection`,
    revocation_endpoint: `${base}/revocation`,
    end_session_endpoint: `${base}/logout`,
    jwks_uri: `${base}/metadata.jwks`,
    device_authorization_endpoint: `${base}/device_authorization`,
    scopes_supported: ['openid', 'profile', 'email'],
    response_types_supported: ['code'],
    response_modes_supported: ['query', 'fragment', 'form_post'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', 'password', 'urn:ietf:params:oauth:grant-type:device_code'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA'],
    userinfo_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA'],
    ...(keyEncryptionKey
      ? {
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt', 'none'],
          introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt'],
          revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt', 'none'],
          token_endpoint_auth_signing_alg_values_supported: ['HS256', 'RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
          introspection_endpoint_auth_signing_alg_values_supported: ['HS256', 'RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
          revocation_endpoint_auth_signing_alg_values_supported: ['HS256', 'RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
        }
      : {
          // Without GATEHOUSE_KEY_ENCRYPTION_KEY no client_secret_jwt client can be registered or verified (decision J1), so neither the method nor its HMAC algorithm is offered.
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
          introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
          revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
          token_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
          introspection_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
          revocation_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
        }),
    code_challenge_methods_supported: ['S256', 'plain'],
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'acr', 'amr', 'azp', 'at_hash', 'session_index', 'sid', 'name', 'given_name', 'family_name', 'preferred_username', 'updated_at', 'email', 'email_verified'],
    claims_parameter_supported: false,
    ui_locales_supported: ['en', 'fi', 'sv'],
    display_values_supported: ['page', 'popup', 'touch'],
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    frontchannel_logout_supported: true,
    frontchannel_logout_session_supported: true,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
  };
}

for (const db of DATABASES) {
  describe(`discovery, JWKS and health on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      // No throttling: the auth-method probes fail on purpose more often than a client may.
      // A key-encryption key: client_secret_jwt clients keep their secret sealed with it.
      server = await startServer(db, { env: { GATEHOUSE_THROTTLE: 'false', GATEHOUSE_KEY_ENCRYPTION_KEY: TEST_KEK } });
    });
    after(async () => server.close());
    const store = () => server.gatehouse.store;
    const metadata = async () => (await (await fetch(`${server.url}/uas/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    const advertised = async (member: string) => (await metadata())[member] as string[];

    test('both well-known paths serve the same metadata, whose issuer is the URL it was fetched under (DISC-01/02)', async () => {
      const oidc = await fetch(`${server.url}/uas/.well-known/openid-configuration`);
      assert.equal(oidc.status, 200);
      assert.match(oidc.headers.get('content-type') ?? '', /^application\/json/);
      const metadata = (await oidc.json()) as Record<string, unknown>;
      const rfc8414 = (await (await fetch(`${server.url}/uas/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      assert.deepEqual(rfc8414, metadata);
      assert.equal(metadata.issuer, `${server.url}/uas`);
      assert.equal(`${metadata.issuer}/.well-known/openid-configuration`, oidc.url);
    });

    test('the metadata is exactly what is implemented: every member and value (DISC-04..13)', async () => {
      assert.deepEqual(await metadata(), expectedMetadata(server, { keyEncryptionKey: true }));
    });

    // The lists below are derived from behaviour: each value the server could be asked for (every
    // registered one we know of, plus whatever the metadata names) is tried, and those that work
    // must be exactly those advertised.

    test('grant_types_supported: each advertised grant is served, every other is unsupported_grant_type (DISC-08)', async () => {
      const { client, secret } = await addClient(store(), { grantTypes: ['authorization_code', 'refresh_token'] });
      const served = await servedOf(await advertised('grant_types_supported'), KNOWN_GRANT_TYPES, async (grantType) => {
        const response = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: grantType }, { authorization: basic(client.clientId, secret) });
        assert.equal(response.status, 400, grantType);
        return response.body.error !== 'unsupported_grant_type';
      });
      assert.deepEqual(served, await advertised('grant_types_supported'));
    });

    /**
     * How a client registered for exactly one grant gets a token with it, for every grant that can
     * be advertised. A grant added to the registry without a recipe here fails the test below, so
     * nothing is listed that has not been seen to issue a token.
     */
    const ISSUE_WITH: Record<string, (url: string) => Promise<{ status: number; body: Record<string, unknown> }>> = {
      authorization_code: async (url) => {
        const { client, secret } = await addClient(store(), { grantTypes: ['authorization_code'], refreshTokens: false });
        const { code } = await mintCode(store(), client, await addUser(store()));
        return postForm(url, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) });
      },
      refresh_token: async (url) => {
        // The refresh token comes from a code; the code exchange is not what is tested here.
        const { client, secret } = await addClient(store(), { grantTypes: ['authorization_code', 'refresh_token'], refreshTokens: true });
        const { code } = await mintCode(store(), client, await addUser(store()));
        const first = await postForm(url, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) });
        await store().clients.update({ ...client, grantTypes: ['refresh_token'] });
        return postForm(url, { grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token) }, { authorization: basic(client.clientId, secret) });
      },
      client_credentials: async (url) => {
        const { client, secret } = await addClient(store(), { grantTypes: ['client_credentials'], redirectUris: [], refreshTokens: false });
        return postForm(url, { grant_type: 'client_credentials' }, { authorization: basic(client.clientId, secret) });
      },
      password: async (url) => {
        const { client, secret } = await addClient(store(), { grantTypes: ['password'], redirectUris: [], refreshTokens: false });
        const user = await createTestUser(store(), { password: PASSWORD });
        return postForm(url, { grant_type: 'password', username: user.username, password: PASSWORD }, { authorization: basic(client.clientId, secret) });
      },
      'urn:ietf:params:oauth:grant-type:device_code': async (url) => {
        // The device authorization endpoint starts it; the user's approval (the page, tested in
        // device-flow.test.ts) is written through the store, with the live session it names.
        const grantType = 'urn:ietf:params:oauth:grant-type:device_code';
        const { client, secret } = await addClient(store(), { grantTypes: [grantType], redirectUris: [], refreshTokens: false });
        const auth = { authorization: basic(client.clientId, secret) };
        const started = await postForm(`${server.url}/uas/oauth2/device_authorization`, { scope: 'openid' }, auth);
        assert.equal(started.status, 200, JSON.stringify(started.body));
        const user = await addUser(store());
        const now = Date.now();
        const session = { idHash: randomUUID(), sessionIndex: `_${randomUUID()}`, userId: user.id, authTime: now, amr: ['pwd'], acr: undefined, createdAt: now, expiresAt: now + 600_000, maxExpiresAt: now + 3_600_000 };
        await store().sessions.insert(session);
        const userCode = String(started.body.user_code).replace('-', '');
        const approval = { userId: user.id, sessionIndex: session.sessionIndex, authTime: now, amr: ['pwd'], acr: undefined };
        assert.ok(await store().deviceAuthorizations.decide(userCode, { approve: approval }, now), 'approved');
        return postForm(url, { grant_type: grantType, device_code: String(started.body.device_code) }, auth);
      },
    };

    test('grant_types_supported: each advertised grant issues an access token to a client registered for it alone (DISC-08, CC-09)', async () => {
      const url = `${server.url}/uas/oauth2/token`;
      const resource = await addClient(store(), { grantTypes: [] });
      for (const grantType of await advertised('grant_types_supported')) {
        const issue = ISSUE_WITH[grantType];
        assert.ok(issue, `${grantType} is advertised but this test has no way to obtain a token with it: add one to ISSUE_WITH`);
        const response = await issue(url);
        assert.equal(response.status, 200, `${grantType}: ${JSON.stringify(response.body)}`);
        assert.equal(typeof response.body.access_token, 'string', grantType);
        assert.equal(response.body.token_type, 'Bearer', grantType);
        // Issued means stored and usable: a resource server's introspection finds it active.
        const introspection = await postForm(`${server.url}/uas/oauth2/introspection`, { token: String(response.body.access_token) }, { authorization: basic(resource.client.clientId, resource.secret) });
        assert.equal(introspection.body.active, true, `${grantType}: the issued token is not active`);
      }
    });

    test('response_types_supported, response_modes_supported and code_challenge_methods_supported: each advertised value gets the login page, every other an error (DISC-05, DISC-10)', async () => {
      const { client } = await addClient(store());
      const answers = async (extra: Record<string, string>) => {
        const response = await browse(authorizationUrl(server.url, { response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 's', ...extra }));
        if (response.status === 200) return true;
        assert.equal(response.status, 302, JSON.stringify(extra));
        assert.ok(redirectParams(response).get('error'), JSON.stringify(extra));
        return false;
      };
      assert.deepEqual(await servedOf(await advertised('response_types_supported'), KNOWN_RESPONSE_TYPES, (value) => answers({ response_type: value })), await advertised('response_types_supported'));
      assert.deepEqual(await servedOf(await advertised('response_modes_supported'), KNOWN_RESPONSE_MODES, (value) => answers({ response_mode: value })), await advertised('response_modes_supported'));
      const challenge = 'A'.repeat(43);
      assert.deepEqual(await servedOf(await advertised('code_challenge_methods_supported'), KNOWN_CHALLENGE_METHODS, (value) => answers({ code_challenge: challenge, code_challenge_method: value })), await advertised('code_challenge_methods_supported'));
    });

    test('the auth methods of the token, introspection and revocation endpoints: a client using an advertised one authenticates, any other is invalid_client (DISC-09, DISC-13)', async () => {
      await assertAuthMethodsAsAdvertised(server);
    });

    test('token_endpoint_auth_methods_supported: a client can be registered with exactly the advertised methods (issue 22, item 6)', async () => {
      await assertRegistrableAsAdvertised(server);
    });

    test('scopes_supported: a login asking for every scope is granted exactly the advertised ones (DISC-07)', async () => {
      const { client, secret } = await addClient(store());
      const user = await createTestUser(store(), { password: PASSWORD });
      const scope = [...new Set([...KNOWN_SCOPES, ...(await advertised('scopes_supported'))])].join(' ');
      const redirect = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, { response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope, state: 's' }, { username: user.username, password: PASSWORD });
      const code = redirectParams(redirect).get('code')!;
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.deepEqual((tokens.body.scope as string).split(' ').sort(), [...(await advertised('scopes_supported'))].sort());
    });

    test('claims_supported, id_token_signing_alg_values_supported and subject_types_supported: what the ID token and UserInfo carry at most (DISC-05, DISC-06)', async () => {
      // Everything on: a user with every profile field, every scope, a nonce and an acr, scope claims in the ID token too.
      const user = await addUser(store());
      const seen = new Set<string>();
      const algs = new Set<string>();
      const subjects = new Set<string>();
      // One client per advertised algorithm: the ID tokens come signed in exactly those.
      const rps = [];
      for (const [i, alg] of (await advertised('id_token_signing_alg_values_supported')).entries()) {
        rps.push(await addClient(store(), { idTokenSignedResponseAlg: alg as Client['idTokenSignedResponseAlg'], ...(i === 0 ? { metadata: { id_token_scope_claims: true } } : {}) }));
      }
      for (const rp of rps) {
        const { code } = await mintCode(store(), rp.client, user, { scope: (await advertised('scopes_supported')).join(' '), nonce: 'n-1', acr: 'urn:example:acr' });
        const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(rp.client.clientId, rp.secret) });
        assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
        const [header, payload] = (tokens.body.id_token as string).split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>);
        algs.add(header!.alg as string);
        const userinfo = (await (await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.body.access_token as string}` } })).json()) as Record<string, unknown>;
        for (const name of [...Object.keys(payload!), ...Object.keys(userinfo)]) seen.add(name);
        subjects.add(payload!.sub as string);
      }
      assert.deepEqual([...seen].sort(), [...(await advertised('claims_supported'))].sort());
      assert.deepEqual([...algs], await advertised('id_token_signing_alg_values_supported'));
      // The same user has one sub at every client: public, not pairwise (OIDC Core §8).
      assert.equal(subjects.size, 1);
      assert.deepEqual(await advertised('subject_types_supported'), ['public']);
    });

    test('ui_locales_supported: the login page comes in exactly the advertised languages (DISC-13)', async () => {
      const { client } = await addClient(store());
      const served = await servedOf(await advertised('ui_locales_supported'), KNOWN_LOCALES, async (tag) => {
        const html = await (await browse(authorizationUrl(server.url, { response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', ui_locales: tag }))).text();
        return html.includes(`<html lang="${tag}">`);
      });
      assert.deepEqual(served, await advertised('ui_locales_supported'));
    });

    test('JWKS has one public key per advertised algorithm, with kid, use and alg: RSA of 2048 bits or more, P-256, Ed25519 (JWKS-01..05, AL-02)', async () => {
      const response = await fetch(`${server.url}/uas/oauth2/metadata.jwks`);
      assert.equal(response.status, 200);
      const { keys } = (await response.json()) as { keys: Record<string, string>[] };
      assert.deepEqual(keys.map((k) => k.alg).sort(), [...(await advertised('id_token_signing_alg_values_supported'))].sort());
      // Exactly the public members of each key type (RFC 7518 §6.2.1, §6.3.1; RFC 8037 §2), plus kid, use and alg.
      const members: Record<string, string[]> = { RS256: ['kty', 'n', 'e'], PS256: ['kty', 'n', 'e'], ES256: ['kty', 'crv', 'x', 'y'], EdDSA: ['kty', 'crv', 'x'] };
      const types: Record<string, Record<string, string>> = { RS256: { kty: 'RSA' }, PS256: { kty: 'RSA' }, ES256: { kty: 'EC', crv: 'P-256' }, EdDSA: { kty: 'OKP', crv: 'Ed25519' } };
      for (const key of keys) {
        assert.deepEqual(Object.keys(key).sort(), [...members[key.alg!]!, 'kid', 'use', 'alg'].sort(), key.alg);
        for (const [name, value] of Object.entries(types[key.alg!]!)) assert.equal(key[name], value, `${key.alg} ${name}`);
        assert.equal(key.use, 'sig');
        assert.ok(key.kid);
        if (key.kty === 'RSA') assert.ok(Buffer.from(key.n!, 'base64url').length >= 256);
      }
      assert.equal(new Set(keys.map((k) => k.kid)).size, keys.length, 'kids are distinct');
    });

    test('liveness and readiness answer 200 while the store is up', async () => {
      assert.equal((await fetch(`${server.url}/health/live`)).status, 200);
      const ready = await fetch(`${server.url}/health/ready`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ok' });
    });

    test('an unknown path is a JSON 404, not a 5xx', async () => {
      const response = await fetch(`${server.url}/uas/nothing-here`);
      assert.equal(response.status, 404);
      assert.equal(((await response.json()) as { error: string }).error, 'not_found');
    });
  });

  // Discovery says only what works in this configuration (issue 22, item 6): without a
  // key-encryption key client_secret_jwt can be neither registered nor verified.
  describe(`discovery without GATEHOUSE_KEY_ENCRYPTION_KEY on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_THROTTLE: 'false' } });
    });
    after(async () => server.close());
    test('the metadata is exactly what works: no client_secret_jwt, no HS256', async () => {
      assert.deepEqual(await (await fetch(`${server.url}/uas/.well-known/openid-configuration`)).json(), expectedMetadata(server, { keyEncryptionKey: false }));
    });

    test('a client using an advertised method authenticates, any other (client_secret_jwt among them) is invalid_client', async () => {
      await assertAuthMethodsAsAdvertised(server);
    });

    test('a client can be registered with exactly the advertised methods: client_secret_jwt is refused', async () => {
      await assertRegistrableAsAdvertised(server);
    });
  });
}
