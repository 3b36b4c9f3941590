import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SIGNING_ALGS } from '../protocol/constants.ts';
import { resourceScopesOf, type Client } from '../domain/client.ts';
import { openClientSecret } from '../crypto/key-encryption.ts';
import { ManualClock } from '../lib/clock.ts';
import { hashSecret } from '../lib/hash.ts';
import { cryptoRandom } from '../lib/random.ts';
import type { ClientStore, Store, StoreTransaction } from '../storage/ports.ts';
import {
  ClientNotFound,
  InvalidClientMetadata,
  clientView,
  deleteClient,
  registerClient,
  rotateClientSecret,
  setClientActive,
  updateClient,
} from './client-registration.ts';
import { CLIENT_AUTH_METHODS } from './client-auth/registry.ts';
import { corsOriginsOf } from './client-cors.ts';
import { clientNameFor, logoUriOf } from './client-display.ts';
import { clientWarnings } from './client-metadata.ts';

class MemoryClients implements ClientStore {
  readonly rows = new Map<string, Client>();
  async insert(client: Client) {
    this.rows.set(client.clientId, structuredClone(client));
  }
  async get(clientId: string) {
    const row = this.rows.get(clientId);
    return row && structuredClone(row);
  }
  async list() {
    return [...this.rows.values()];
  }
  async update(client: Client) {
    if (!this.rows.has(client.clientId)) return false;
    this.rows.set(client.clientId, structuredClone(client));
    return true;
  }
  async delete(clientId: string) {
    return this.rows.delete(clientId);
  }
  async attachPolicyIfNone(clientId: string, policyName: string, now: number) {
    const row = this.rows.get(clientId);
    if (!row || row.authorizationPolicy !== undefined) return false;
    this.rows.set(clientId, { ...row, authorizationPolicy: policyName, updatedAt: now });
    return true;
  }
  async insertIfAbsent(client: Client) {
    if (this.rows.has(client.clientId)) return false;
    await this.insert(client);
    return true;
  }
  async page(query: { after?: string; limit: number }) {
    return [...this.rows.values()].filter((c) => query.after === undefined || c.clientId > query.after).sort((a, b) => (a.clientId < b.clientId ? -1 : 1)).slice(0, query.limit);
  }
  async findByResourceUri(uri: string) {
    const row = [...this.rows.values()].find((client) => Array.isArray(client.metadata.resource_uris) && client.metadata.resource_uris.includes(uri));
    return row && structuredClone(row);
  }
  async resourceScopeOwners(values: readonly string[]) {
    const owners = new Map<string, string>();
    for (const client of this.rows.values()) for (const value of resourceScopesOf(client)) if (values.includes(value)) owners.set(value, client.clientId);
    return owners;
  }
}

function setup() {
  const clients = new MemoryClients();
  const clock = new ManualClock();
  // No users here: a client_id that is a user's id is test/contract/subject-ids.test.ts's subject.
  const users = { getProfile: async () => undefined };
  // One caller at a time in these tests: the unit of work is the store itself (test/contract races the SQL one).
  const transaction: Store['transaction'] = (work) => work({ clients, users } as unknown as StoreTransaction);
  return { clients, transaction, clock, random: cryptoRandom };
}

const base = { client_name: 'Web shop', redirect_uris: ['https://shop.example/cb'] };

async function register(metadata: Record<string, unknown>) {
  return registerClient(setup(), { ...base, ...metadata });
}

async function refused(metadata: Record<string, unknown>, field: string, message?: RegExp) {
  await assert.rejects(register(metadata), (error: unknown) => {
    assert.ok(error instanceof InvalidClientMetadata, String(error));
    assert.equal(error.field, field);
    if (message) assert.match(error.message, message);
    return true;
  });
}

describe('redirect URI rules', () => {
  const rejected: [string, string, RegExp][] = [
    ['javascript: scheme', 'javascript:alert(1)', /javascript: scheme/],
    ['javascript: scheme in mixed case', 'JaVaScRiPt:alert(document.cookie)', /javascript: scheme/],
    ['data: URI', 'data:text/html,<script>alert(1)</script>', /data: scheme/],
    ['vbscript: scheme', 'vbscript:msgbox(1)', /vbscript: scheme/],
    ['file: scheme', 'file:///etc/passwd', /file: scheme/],
    ['a fragment', 'https://a.example/cb#frag', /fragment/],
    ['an empty trailing fragment', 'https://a.example/cb#', /fragment/],
    ['user information', 'https://user@a.example/cb', /user information/],
    ['user and password', 'https://user:pw@a.example/cb', /user information/],
    ['a percent-encoded userinfo trick', 'http://localhost:8090%25@example.com', /user information/],
    ['percent-encoding in the host', 'http://localhost%2eevil.test/cb', /percent-encode/],
    ['a dot-dot segment', 'https://a.example/../cb', /path segments/],
    ['a dot segment', 'https://a.example/./cb', /path segments/],
    ['a servlet "..;" segment', 'https://a.example/a/..;/cb', /path segments/],
    ['an encoded dot-dot', 'https://a.example/a/%2e%2e/cb', /path segments/],
    ['a double-encoded slash after dot-dot', 'https://a.example/a/..%252f/cb', /path segments/],
    ['a trailing dot-dot', 'https://a.example/a/..', /path segments/],
    ['a loopback look-alike host', 'http://localhost.evil.test/cb', /loopback/],
    ['plain http on a public host', 'http://example.com/cb', /loopback/],
    ['an obfuscated loopback address', 'http://127.1/cb', /loopback/],
    ['a relative URI', '/cb', /absolute URI/],
    ['a backslash', 'https://a.example\\@evil.test/cb', /backslash/],
    ['a space', 'https://a.example/c b', /ASCII/],
    ['a leading space', ' https://a.example/cb', /ASCII/],
    ['a newline', 'https://a.example/cb\n', /ASCII/],
    ['an empty string', '', /empty/],
    ['ftp', 'ftp://a.example/cb', /^redirect_uris: "ftp:\/\/a.example\/cb" must use https, http with a loopback host, or a private-use scheme such as com.example.app: \(RFC 8252 §7.1\), not "ftp:"$/],
    ['mailto', 'mailto:someone@a.example', /not "mailto:"$/],
    ['intent', 'intent://cb#Intent;end', /fragment/],
    // Decision X5: a port is 1-65535 in its one written form.
    ['loopback port 0', 'http://127.0.0.1:0/cb', /port must be a number from 1 to 65535 without leading zeros/],
    ['a loopback port with leading zeros', 'http://127.0.0.1:009/cb', /port must be a number from 1 to 65535 without leading zeros/],
    ['an IPv6 loopback port 0', 'http://[::1]:0/cb', /port must be a number from 1 to 65535 without leading zeros/],
    ['an empty loopback port', 'http://localhost:/cb', /port must be a number from 1 to 65535 without leading zeros/],
    ['an https port with a leading zero', 'https://a.example:0443/cb', /port must be a number from 1 to 65535 without leading zeros/],
  ];
  for (const [what, uri, message] of rejected) {
    test(`refuses ${what}: ${JSON.stringify(uri)}`, async () => {
      await refused({ redirect_uris: [uri] }, 'redirect_uris', message);
    });
  }

  const accepted: [string, string][] = [
    ['https with a query', 'https://a.example/cb?x=1'],
    ['https with a port', 'https://a.example:8443/oauth/callback'],
    ['http on 127.0.0.1', 'http://127.0.0.1/cb'],
    ['http on [::1] with a port', 'http://[::1]:5000/cb'],
    ['http on localhost', 'http://localhost:3000/cb'],
    ['the highest port', 'http://127.0.0.1:65535/cb'],
    ['port 1', 'http://[::1]:1/cb'],
    ['a reverse-domain private-use scheme', 'com.example.app:/oauth2redirect'],
    // RFC 8252 §7.1: SHOULD be reverse-domain; the CLI warns (clientWarnings below).
    ['a private-use scheme without a dot', 'myapp://cb'],
    ['a path that merely contains dots', 'https://a.example/.well-known/cb...x'],
  ];
  for (const [what, uri] of accepted) {
    test(`accepts ${what}: ${uri}`, async () => {
      const { client } = await register({ redirect_uris: [uri] });
      assert.deepEqual(client.redirectUris, [uri]);
    });
  }

  test('stores the URI exactly as given, not normalized', async () => {
    const uri = 'HTTPS://A.Example:443/Cb?b=2&a=1';
    const { client } = await register({ redirect_uris: [uri] });
    assert.deepEqual(client.redirectUris, [uri]);
  });

  test('application_type (OIDC Registration §2): "web" or "native", kept in the metadata; absent is web', async () => {
    assert.equal((await register({ application_type: 'native', redirect_uris: ['http://127.0.0.1/cb'] })).client.metadata.application_type, 'native');
    assert.equal((await register({ application_type: 'web' })).client.metadata.application_type, 'web');
    assert.equal((await register({})).client.metadata.application_type, undefined);
    for (const value of ['Native', 'browser', '', 1, true, ['native']]) await refused({ application_type: value }, 'application_type', /^application_type: must be one of web, native$/);
  });

  test('post_logout_redirect_uris follow the same rules', async () => {
    await refused({ post_logout_redirect_uris: ['javascript:alert(1)'] }, 'post_logout_redirect_uris');
    const { client } = await register({ post_logout_redirect_uris: ['https://shop.example/bye'] });
    assert.deepEqual(client.postLogoutRedirectUris, ['https://shop.example/bye']);
  });
});

describe('registerClient', () => {
  test('generates a UUID client_id and a 256-bit secret, storing only its hash', async () => {
    const deps = setup();
    const { client, clientSecret } = await registerClient(deps, base);
    assert.match(client.clientId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.match(clientSecret!, /^[A-Za-z0-9_-]{43}$/);
    const stored = deps.clients.rows.get(client.clientId)!;
    assert.equal(stored.secretHash, hashSecret(clientSecret!));
    assert.ok(!JSON.stringify(stored).includes(clientSecret!));
    assert.equal(stored.active, true);
    assert.equal(stored.createdAt, deps.clock.now());
  });

  test('a public client gets no secret and only the authorization_code grant by default', async () => {
    const { client, clientSecret } = await register({ token_endpoint_auth_method: 'none' });
    assert.equal(clientSecret, undefined);
    assert.equal(client.secretHash, undefined);
    assert.deepEqual(client.grantTypes, ['authorization_code']);
  });

  test('defaults: Ubisecure grant types less password, no refresh tokens unless asked for, rotation on', async () => {
    const { client } = await register({});
    assert.deepEqual(client.grantTypes, ['authorization_code', 'refresh_token']);
    assert.equal(client.refreshTokens, false);
    assert.equal(client.rotateRefreshTokens, true);
    assert.equal(client.tokenEndpointAuthMethod, undefined);
    assert.equal(client.codeChallengeMethod, undefined);
  });

  test('an explicit refresh_token grant turns refresh tokens on', async () => {
    const { client } = await register({ grant_types: ['authorization_code', 'refresh_token'] });
    assert.equal(client.refreshTokens, true);
  });

  test('refresh_tokens: true widens the default grant types but not an explicit list', async () => {
    const { client } = await register({ token_endpoint_auth_method: 'none', refresh_tokens: true });
    assert.deepEqual(client.grantTypes, ['authorization_code', 'refresh_token']);
    await refused({ grant_types: ['authorization_code'], refresh_tokens: true }, 'refresh_tokens');
  });

  test('an empty grant_types list disables every grant and needs no redirect URI', async () => {
    const { client } = await register({ grant_types: [], redirect_uris: [] });
    assert.deepEqual(client.grantTypes, []);
  });

  test('client_credentials alone: a confidential client with no redirect URI (CC-14)', async () => {
    const { client, clientSecret } = await registerClient(setup(), { client_name: 'Nightly sync', grant_types: ['client_credentials'] });
    assert.deepEqual(client.grantTypes, ['client_credentials']);
    assert.deepEqual(client.redirectUris, []);
    assert.equal(client.refreshTokens, false);
    assert.match(clientSecret!, /^[A-Za-z0-9_-]{43}$/);
    // Beside the code grant, the redirect URI is still required for the code grant's sake.
    await assert.rejects(registerClient(setup(), { client_name: 'x', grant_types: ['authorization_code', 'client_credentials'] }), (error: unknown) => error instanceof InvalidClientMetadata && error.field === 'redirect_uris');
  });

  test('a public client cannot register client_credentials, at creation or by turning public later (CC-14)', async () => {
    const message = /^grant_types: "client_credentials" is for confidential clients only; a public client \(token_endpoint_auth_method "none"\) cannot register it$/;
    await refused({ grant_types: ['client_credentials'], token_endpoint_auth_method: 'none', redirect_uris: [] }, 'grant_types', message);
    await refused({ grant_types: ['authorization_code', 'client_credentials'], token_endpoint_auth_method: 'none' }, 'grant_types', message);
    const deps = setup();
    const { client } = await registerClient(deps, { client_name: 'Nightly sync', grant_types: ['client_credentials'] });
    await assert.rejects(updateClient(deps, client.clientId, { token_endpoint_auth_method: 'none' }), (error: unknown) => error instanceof InvalidClientMetadata && message.test(error.message));
    assert.equal((await deps.clients.get(client.clientId))?.tokenEndpointAuthMethod, undefined, 'the refused update changed nothing');
  });

  test('refuses grants gatehouse does not offer, naming them', async () => {
    await refused({ grant_types: ['implicit'] }, 'grant_types', /implicit/);
    await refused({ grant_types: ['urn:ietf:params:oauth:grant-type:saml2-bearer'] }, 'grant_types', /not supported/);
  });

  test('the device_code grant (RFC 8628) alone needs no redirect URI; with authorization_code it does', async () => {
    const { client } = await register({ grant_types: ['urn:ietf:params:oauth:grant-type:device_code'], redirect_uris: undefined, token_endpoint_auth_method: 'none' });
    assert.deepEqual(client.grantTypes, ['urn:ietf:params:oauth:grant-type:device_code']);
    assert.deepEqual(client.redirectUris, []);
    await refused({ grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'authorization_code'], redirect_uris: undefined }, 'redirect_uris', /at least one/);
  });

  test('the password grant (PW-REG): only when registered, only for a confidential client; no redirect URI needed without authorization_code', async () => {
    const { client } = await register({ grant_types: ['password', 'refresh_token'], redirect_uris: [] });
    assert.deepEqual(client.grantTypes, ['password', 'refresh_token']);
    assert.equal(client.refreshTokens, true);
    const basic = await register({ grant_types: ['password'], token_endpoint_auth_method: 'client_secret_basic', redirect_uris: [] });
    assert.deepEqual(basic.client.grantTypes, ['password']);
    assert.ok(basic.clientSecret);
    const message = 'grant_types: "password" is for confidential clients only; a public client (token_endpoint_auth_method "none") cannot register it';
    await assert.rejects(register({ grant_types: ['authorization_code', 'password'], token_endpoint_auth_method: 'none' }), (error: unknown) => {
      assert.ok(error instanceof InvalidClientMetadata);
      assert.equal(error.field, 'grant_types');
      assert.equal(error.message, message);
      return true;
    });
    // A client that becomes public keeps no password grant.
    const deps = setup();
    const { client: confidential } = await registerClient(deps, { ...base, grant_types: ['authorization_code', 'password'] });
    await assert.rejects(updateClient(deps, confidential.clientId, { ...base, grant_types: ['authorization_code', 'password'], token_endpoint_auth_method: 'none' }), (error: unknown) => error instanceof InvalidClientMetadata && error.message === message);
  });

  test('validates every known key, naming the field', async () => {
    await refused({ client_name: undefined }, 'client_name', /required/);
    await refused({ client_name: '  ' }, 'client_name');
    await refused({ redirect_uris: 'https://a.example/cb' }, 'redirect_uris', /array/);
    await refused({ redirect_uris: [] }, 'redirect_uris', /at least one/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt' }, 'token_endpoint_auth_method');
    await refused({ code_challenge_method: 's256' }, 'code_challenge_method');
    await refused({ scope: 'openid "bad' }, 'scope');
    await refused({ scope: 42 }, 'scope');
    await refused({ id_token_signed_response_alg: 'HS256' }, 'id_token_signed_response_alg', /RS256, PS256, ES256, EdDSA/);
    await refused({ id_token_signed_response_alg: 'none' }, 'id_token_signed_response_alg');
    await refused({ id_token_encrypted_response_alg: 'RSA-OAEP' }, 'id_token_encrypted_response_alg');
    await refused({ response_types: ['token'] }, 'response_types');
    await refused({ refresh_tokens: 'yes' }, 'refresh_tokens');
    await refused({ rotate_refresh_tokens: 1 }, 'rotate_refresh_tokens');
    await refused({ access_token_ttl: 1.5 }, 'access_token_ttl');
    await refused({ access_token_ttl: -1 }, 'access_token_ttl');
    await refused({ active: 'true' }, 'active');
    await refused({ client_id: 'chosen' }, 'client_id');
    await refused({ client_secret: 'chosen' }, 'client_secret');
    await assert.rejects(registerClient(setup(), ['not', 'an', 'object']), InvalidClientMetadata);
  });

  test('warns of a private-use redirect scheme without a dot, and of nothing else', async () => {
    const { client } = await register({ redirect_uris: ['myapp://cb', 'com.example.app:/cb', 'https://a.example/cb', 'http://127.0.0.1/cb'] });
    assert.deepEqual(clientWarnings(client), [
      'redirect_uris: "myapp://cb" uses the private-use scheme "myapp:" without a dot; RFC 8252 §7.1 says it SHOULD be a reverse domain name you control, such as com.example.app:, so that no other app can claim it',
    ]);
    assert.deepEqual(clientWarnings((await register({})).client), []);
  });

  test('logo_uri and client_name#<language>: shown on the login page, so accepted, and validated', async () => {
    const { client } = await register({ logo_uri: 'https://shop.example/logo.png', 'client_name#fi': ' Verkkokauppa ', 'client_name#sv-FI': 'Webbutik' });
    assert.equal(client.metadata.logo_uri, 'https://shop.example/logo.png');
    assert.equal(client.metadata['client_name#fi'], 'Verkkokauppa');
    assert.equal(clientView(client)['client_name#sv-FI'], 'Webbutik');
    assert.equal(clientNameFor(client, 'fi'), 'Verkkokauppa');
    assert.equal(clientNameFor(client, 'sv'), 'Webbutik');
    assert.equal(clientNameFor(client, 'en'), client.name);
    const logos = (await register({ logo_uri: 'https://shop.example/logo.png', 'logo_uri#fi': 'https://shop.example/logo-fi.png' })).client;
    assert.equal(logoUriOf(logos, 'fi'), 'https://shop.example/logo-fi.png');
    assert.equal(logoUriOf(logos, 'sv'), 'https://shop.example/logo.png', 'no logo_uri#sv: the untagged one');
    assert.equal(logoUriOf(logos), 'https://shop.example/logo.png');
    assert.equal((await register({ logo_uri: 'http://127.0.0.1:3000/logo.svg' })).client.metadata.logo_uri, 'http://127.0.0.1:3000/logo.svg');
    await refused({ logo_uri: 'http://shop.example/logo.png' }, 'logo_uri', /^logo_uri: must be an https URL \(http only on a loopback host\)$/);
    await refused({ logo_uri: 'javascript:alert(1)' }, 'logo_uri', /must name its host|https URL/);
    await refused({ logo_uri: 'data:image/png;base64,AAAA' }, 'logo_uri');
    await refused({ logo_uri: 'https://user@shop.example/logo.png' }, 'logo_uri', /user information/);
    await refused({ logo_uri: 'https://[2001:db8::1]/logo.png' }, 'logo_uri', /DNS name or an IPv4 address/);
    await refused({ logo_uri: 'logo.png' }, 'logo_uri', /absolute URL/);
    await refused({ logo_uri: 42 }, 'logo_uri', /URL string/);
    await refused({ 'client_name#fi': '' }, 'client_name#fi', /non-empty string/);
    await refused({ 'client_name#fi': 'a\u0007b' }, 'client_name#fi', /control characters/);
    await refused({ 'client_name#': 'x' }, 'client_name#', /not a BCP 47 language tag/);
    await refused({ 'client_name#not a tag': 'x' }, 'client_name#not a tag', /not a BCP 47 language tag/);
    await refused({ 'logo_uri#fi': 'http://shop.example/logo.png' }, 'logo_uri#fi', /https URL/);
    await refused({ 'logo_uri#fi': 'https://shop.example/logo.png#x' }, 'logo_uri#fi', /fragment/);
    await refused({ 'logo_uri#x y': 'https://shop.example/logo.png' }, 'logo_uri#x y', /not a BCP 47 language tag/);
    await refused({ 'tos_uri#fi': 'https://shop.example/tos' }, 'tos_uri#fi', /^tos_uri#fi: is not supported: of the language-tagged metadata \(RFC 7591 §2.2\) only client_name#<language> and logo_uri#<language> are shown$/);
  });

  test('allowed_cors_origins: origins only (scheme://host[:port]), https or loopback http, stored as browsers send them (SP-11)', async () => {
    const { client } = await register({ allowed_cors_origins: ['https://App.Example', 'http://127.0.0.1:5173', 'http://localhost:8081', 'https://app.example', 'https://app.example:8443'] });
    assert.deepEqual(client.metadata.allowed_cors_origins, ['https://app.example', 'http://127.0.0.1:5173', 'http://localhost:8081', 'https://app.example:8443']);
    assert.deepEqual(corsOriginsOf(client), ['https://app.example', 'http://127.0.0.1:5173', 'http://localhost:8081', 'https://app.example:8443']);
    assert.deepEqual(corsOriginsOf((await register({ allowed_cors_origins: [] })).client), [], 'an empty list: no origin at all');
    const derived = (await register({ redirect_uris: ['https://spa.example/cb', 'https://spa.example/other', 'http://127.0.0.1:4000/cb', 'com.example.app:/cb'] })).client;
    assert.deepEqual(corsOriginsOf(derived), ['https://spa.example', 'http://127.0.0.1:4000'], 'without the key: the web redirect URIs\' origins');
    await refused({ allowed_cors_origins: ['https://app.example/'] }, 'allowed_cors_origins', /^allowed_cors_origins: "https:\/\/app.example\/" is not an origin: write it as https:\/\/app.example \(scheme:\/\/host\[:port\], no path, no trailing slash, no default port\)$/);
    await refused({ allowed_cors_origins: ['https://app.example/spa'] }, 'allowed_cors_origins', /is not an origin: write it as https:\/\/app.example/);
    await refused({ allowed_cors_origins: ['https://app.example:443'] }, 'allowed_cors_origins', /write it as https:\/\/app.example /);
    await refused({ allowed_cors_origins: ['https://app.example?x=1'] }, 'allowed_cors_origins', /is not an origin/);
    await refused({ allowed_cors_origins: ['https://user@app.example'] }, 'allowed_cors_origins', /is not an origin/);
    await refused({ allowed_cors_origins: ['http://app.example'] }, 'allowed_cors_origins', /must be an https origin \(http only on a loopback host\)$/);
    await refused({ allowed_cors_origins: ['null'] }, 'allowed_cors_origins', /"null" is not an origin such as https:\/\/app.example.com$/);
    await refused({ allowed_cors_origins: ['*'] }, 'allowed_cors_origins', /is not an origin such as/);
    await refused({ allowed_cors_origins: ['file:///tmp/x'] }, 'allowed_cors_origins', /must be an https origin/);
    await refused({ allowed_cors_origins: 'https://app.example' }, 'allowed_cors_origins', /must be an array of strings/);
    await refused({ allowed_cors_origins: Array.from({ length: 101 }, (_, i) => `https://a${i}.example`) }, 'allowed_cors_origins', /at most 100 origins/);
  });

  test('refuses every key gatehouse does not implement, naming it (RFC 7591 §2 would let it ignore them)', async () => {
    await refused({ policy_uri: 'https://shop.example/policy' }, 'policy_uri', /^policy_uri: is not supported: the login page shows no policy link$/);
    await refused({ request_uris: ['https://shop.example/r'] }, 'request_uris', /request objects are not supported/);
    await refused({ audience: ['x'] }, 'audience', /the key is aud/);
    await refused({ software_id: 'abc' }, 'software_id', /^software_id: is not a client metadata key gatehouse implements; remove it \(in an update, set it to null\)$/);
    await refused({ constructor: 'x' }, 'constructor', /is not a client metadata key gatehouse implements/);
    await refused({ id_token_scope_claims: 'yes' }, 'id_token_scope_claims', /true or false/);
  });

  test('echoes the implemented keys that have no typed column; the view never shows the secret', async () => {
    const { client, clientSecret } = await register({ id_token_signed_response_alg: 'RS256', id_token_scope_claims: true, response_types: ['code'], scope: 'openid  email' });
    const view = clientView(client);
    assert.equal(view.id_token_signed_response_alg, 'RS256');
    assert.equal(view.id_token_scope_claims, true);
    assert.deepEqual(view.response_types, ['code']);
    assert.equal(view.scope, 'openid email');
    assert.equal(view.client_id, client.clientId);
    assert.equal(view.created_at, '2026-01-01T00:00:00.000Z');
    const json = JSON.stringify(view);
    assert.ok(!json.includes(clientSecret!) && !json.includes(client.secretHash!) && !json.includes('secret'));
  });

  test('id_token_signed_response_alg and userinfo_signed_response_alg: each algorithm we sign with, RS256 and plain UserInfo by default, in the view and through an update (AL-05)', async () => {
    const plain = await register({});
    assert.equal(plain.client.idTokenSignedResponseAlg, 'RS256', 'OIDC Registration §2 default');
    assert.equal(plain.client.userinfoSignedResponseAlg, undefined);
    assert.equal(clientView(plain.client).id_token_signed_response_alg, 'RS256');
    assert.equal(clientView(plain.client).userinfo_signed_response_alg, undefined);
    for (const alg of SIGNING_ALGS) {
      const { client } = await register({ id_token_signed_response_alg: alg, userinfo_signed_response_alg: alg });
      assert.equal(client.idTokenSignedResponseAlg, alg);
      assert.equal(client.userinfoSignedResponseAlg, alg);
      assert.equal(clientView(client).id_token_signed_response_alg, alg);
      assert.equal(clientView(client).userinfo_signed_response_alg, alg);
      assert.equal(client.metadata.id_token_signed_response_alg, undefined, 'a typed column, not metadata');
    }
    const deps = setup();
    const { client } = await registerClient(deps, { ...base, userinfo_signed_response_alg: 'ES256' });
    const updated = await updateClient(deps, client.clientId, { id_token_signed_response_alg: 'EdDSA', userinfo_signed_response_alg: null });
    assert.equal(updated.client.idTokenSignedResponseAlg, 'EdDSA');
    assert.equal(updated.client.userinfoSignedResponseAlg, undefined, 'null restores plain JSON');
  });

  test('refuses none and every algorithm we do not sign with, naming the field and listing the ones we do (AL-05)', async () => {
    const list = SIGNING_ALGS.join(', ');
    for (const field of ['id_token_signed_response_alg', 'userinfo_signed_response_alg']) {
      await refused({ [field]: 'none' }, field, new RegExp(`^${field}: "none" is refused: gatehouse signs every token; use one of ${list}$`));
      for (const alg of ['HS256', 'RS512', 'ES384', 'Ed25519', 'rs256', '', 256]) {
        await refused({ [field]: alg }, field, new RegExp(`is not an algorithm gatehouse signs with; use one of ${list}$`));
      }
    }
  });

  test('active comes from the options, then the document, then defaults to true', async () => {
    assert.equal((await registerClient(setup(), base, { active: false })).client.active, false);
    assert.equal((await register({ active: false })).client.active, false);
    assert.equal((await registerClient(setup(), { ...base, active: false }, { active: true })).client.active, true);
  });
});

describe('client management', () => {
  test('updateClient merges a patch, revalidates, and keeps the secret', async () => {
    const deps = setup();
    const { client } = await registerClient(deps, { ...base, id_token_scope_claims: true });
    deps.clock.advance(1000);
    const { client: updated, clientSecret } = await updateClient(deps, client.clientId, { client_name: 'Shop', access_token_ttl: 600, id_token_scope_claims: null });
    assert.equal(clientSecret, undefined);
    assert.equal(updated.name, 'Shop');
    assert.equal(updated.accessTokenTtl, 600);
    assert.deepEqual(updated.redirectUris, base.redirect_uris);
    assert.equal(updated.secretHash, client.secretHash);
    assert.equal(updated.metadata.id_token_scope_claims, undefined);
    assert.equal(updated.updatedAt, client.createdAt + 1000);
    await assert.rejects(updateClient(deps, client.clientId, { redirect_uris: ['http://evil.test/cb'] }), InvalidClientMetadata);
  });

  test('a client stored with a key gatehouse no longer accepts keeps it until an update, which must remove it', async () => {
    const deps = setup();
    const { client } = await registerClient(deps, base);
    // As a row written before keys were checked.
    await deps.clients.update({ ...client, metadata: { ...client.metadata, tos_uri: 'https://shop.example/tos' } });
    await assert.rejects(updateClient(deps, client.clientId, { client_name: 'Shop' }), (error: unknown) => error instanceof InvalidClientMetadata && error.field === 'tos_uri');
    const { client: updated } = await updateClient(deps, client.clientId, { client_name: 'Shop', tos_uri: null });
    assert.deepEqual(updated.metadata, {});
  });

  test('aud: a list of other registered client_ids, checked when added; its own id, unknown ids and malformed values are refused', async () => {
    const deps = setup();
    const { client: api } = await registerClient(deps, { client_name: 'API', resource_server: true });
    const { client: other } = await registerClient(deps, { client_name: 'Other API', resource_server: true });
    const { client } = await registerClient(deps, { ...base, aud: [api.clientId, api.clientId] });
    assert.deepEqual(client.metadata.aud, [api.clientId], 'duplicates are dropped');
    assert.deepEqual(clientView(client).aud, [api.clientId]);
    const refusedAud = async (aud: unknown, message: RegExp, clientId?: string) =>
      assert.rejects(clientId ? updateClient(deps, clientId, { aud }) : registerClient(deps, { ...base, aud }), (error: unknown) => {
        assert.ok(error instanceof InvalidClientMetadata, String(error));
        assert.equal(error.field, 'aud');
        assert.match(error.message, message);
        return true;
      });
    await refusedAud(['no-such-client'], /^aud: "no-such-client" is not the client_id of a registered client$/);
    await refusedAud([client.clientId], /is this client's own client_id; a client cannot be its own audience$/, client.clientId);
    await refusedAud(api.clientId, /^aud: must be an array of strings$/);
    await refusedAud(['has space'], /cannot be a client_id requested as a scope value/);
    await refusedAud(Array.from({ length: 101 }, (_, i) => `c${i}`), /at most 100/);
    // A client named in aud that is deleted later does not block unrelated updates; a new entry is checked.
    await deleteClient(deps, api.clientId);
    assert.deepEqual((await updateClient(deps, client.clientId, { client_name: 'Renamed' })).client.metadata.aud, [api.clientId]);
    await refusedAud([api.clientId, 'no-such-client'], /"no-such-client" is not the client_id/, client.clientId);
    assert.deepEqual((await updateClient(deps, client.clientId, { aud: [other.clientId] })).client.metadata.aud, [other.clientId]);
    assert.equal((await updateClient(deps, client.clientId, { aud: null })).client.metadata.aud, undefined);
  });

  test('aud (RI-02): a new entry must name an active resource server, or the identity API client; an entry stored before stays on update', async () => {
    const deps = setup();
    const { client: plain } = await registerClient(deps, { client_name: 'Ordinary app', grant_types: [] });
    const { client: inactive } = await registerClient(deps, { client_name: 'Sleeping API', resource_server: true }, { active: false });
    const refusedAud = async (aud: string[], message: string, clientId?: string) =>
      assert.rejects(clientId ? updateClient(deps, clientId, { aud }) : registerClient(deps, { ...base, aud }), (error: unknown) => {
        assert.ok(error instanceof InvalidClientMetadata, String(error));
        assert.equal(error.message, message);
        return true;
      });
    await refusedAud([plain.clientId], `aud: "${plain.clientId}" is not a resource server; register it with resource_server: true (gatehouse client update ${plain.clientId} --resource-server)`);
    await refusedAud([inactive.clientId], `aud: "${inactive.clientId}" is an inactive client; activate it first`);
    // The configured identity API client counts as a resource server whatever its metadata says.
    const { client: api } = await registerClient(deps, { client_name: 'Identity API', grant_types: [] });
    await refusedAud([api.clientId], `aud: "${api.clientId}" is not a resource server; register it with resource_server: true (gatehouse client update ${api.clientId} --resource-server)`);
    assert.deepEqual((await registerClient({ ...deps, apiClientId: api.clientId }, { ...base, aud: [api.clientId] })).client.metadata.aud, [api.clientId]);
    // A legacy entry (stored before the rule, naming an ordinary client) is kept by an unrelated update; adding one next to it is checked.
    const { client } = await registerClient(deps, base);
    await deps.clients.update({ ...client, metadata: { aud: [plain.clientId] } });
    assert.deepEqual((await updateClient(deps, client.clientId, { client_name: 'Renamed' })).client.metadata.aud, [plain.clientId]);
    await refusedAud([plain.clientId, inactive.clientId], `aud: "${inactive.clientId}" is an inactive client; activate it first`, client.clientId);
  });

  test('resource_scopes (RS-01): a resource server declares RFC 6749 scope-tokens, no OIDC value, no client_id, none another server declared', async () => {
    const deps = setup();
    const { client: api } = await registerClient(deps, { client_name: 'Orders API', resource_server: true, resource_scopes: ['orders.read', 'orders.write', 'orders.read'] });
    assert.deepEqual(clientView(api).resource_scopes, ['orders.read', 'orders.write'], 'duplicates are dropped');
    const refusedMetadata = async (metadata: Record<string, unknown>, message: string, clientId?: string) =>
      assert.rejects(clientId ? updateClient(deps, clientId, metadata) : registerClient(deps, { client_name: 'x', ...metadata }), (error: unknown) => {
        assert.ok(error instanceof InvalidClientMetadata, String(error));
        assert.equal(error.message, message);
        return true;
      });
    await refusedMetadata({ grant_types: [], resource_scopes: ['a.read'] }, 'resource_scopes: only a resource server (resource_server: true) may declare scope values');
    await refusedMetadata({ resource_server: true, resource_scopes: 'a.read' }, 'resource_scopes: must be an array of strings');
    await refusedMetadata({ resource_server: true, resource_scopes: ['a read'] }, 'resource_scopes: "a read" is not a scope value (RFC 6749 §3.3: printable ASCII without spaces, quotes or backslashes), at most 255 characters');
    await refusedMetadata({ resource_server: true, resource_scopes: ['a"b'] }, 'resource_scopes: "a\\"b" is not a scope value (RFC 6749 §3.3: printable ASCII without spaces, quotes or backslashes), at most 255 characters');
    await refusedMetadata({ resource_server: true, resource_scopes: [''] }, 'resource_scopes: "" is not a scope value (RFC 6749 §3.3: printable ASCII without spaces, quotes or backslashes), at most 255 characters');
    for (const standard of ['openid', 'profile', 'email', 'address', 'phone', 'offline_access']) {
      await refusedMetadata({ resource_server: true, resource_scopes: [standard] }, `resource_scopes: "${standard}" is a scope value OpenID Connect defines; choose a name of the API's own, such as orders.read`);
    }
    await refusedMetadata({ resource_server: true, resource_scopes: Array.from({ length: 101 }, (_, i) => `s${i}`) }, 'resource_scopes: may declare at most 100 scope values');
    await refusedMetadata({ resource_server: true, resource_scopes: ['orders.write'] }, `resource_scopes: "orders.write" is already a scope value of the resource server ${api.clientId}; a scope value names one resource server`);
    await refusedMetadata({ resource_server: true, resource_scopes: [api.clientId] }, `resource_scopes: "${api.clientId}" is a client_id, which as a scope value already asks for that client as the audience`);
    await refusedMetadata({ resource_scopes: ['mine', api.clientId] }, `resource_scopes: "${api.clientId}" is a client_id, which as a scope value already asks for that client as the audience`, api.clientId);
    // A client_id imported under a declared value's name would make the value two things.
    await assert.rejects(registerClient(deps, { client_name: 'Imported', grant_types: [] }, { clientId: 'orders.read' }), (error: unknown) => error instanceof InvalidClientMetadata && error.field === 'client_id');
    // Its own values may be declared again; a dropped value is free for another server.
    assert.deepEqual((await updateClient(deps, api.clientId, { resource_scopes: ['orders.write', 'orders.admin'] })).client.metadata.resource_scopes, ['orders.write', 'orders.admin']);
    const { client: other } = await registerClient(deps, { client_name: 'Reports API', resource_server: true, resource_scopes: ['orders.read'] });
    assert.deepEqual(await deps.clients.resourceScopeOwners(['orders.read', 'orders.write']), new Map([['orders.read', other.clientId], ['orders.write', api.clientId]]));
  });

  test('scope (RS-04): only values the grants honour register — OIDC values, and resource servers\' client_ids and declared values within aud; values stored before stay', async () => {
    const deps = setup();
    const { client: api } = await registerClient(deps, { client_name: 'Orders API', resource_server: true, resource_scopes: ['orders.read', 'orders.write'] });
    const { client: other } = await registerClient(deps, { client_name: 'Reports API', resource_server: true, resource_scopes: ['reports.read'] });
    const { client: machine } = await registerClient(deps, { client_name: 'Nightly sync', grant_types: ['client_credentials'], aud: [api.clientId], scope: `orders.read ${api.clientId}` });
    assert.equal(machine.scope, `orders.read ${api.clientId}`);
    const refusedScope = async (metadata: Record<string, unknown>, message: string, clientId?: string) =>
      assert.rejects(clientId ? updateClient(deps, clientId, metadata) : registerClient(deps, { client_name: 'x', grant_types: ['client_credentials'], ...metadata }), (error: unknown) => {
        assert.ok(error instanceof InvalidClientMetadata, String(error));
        assert.equal(error.message, message);
        return true;
      });
    const notGranted = (value: string) => `scope: "${value}" is not a scope value gatehouse grants: use openid, profile, email, the client_id of a resource server in aud, or a scope value one declared (resource_scopes)`;
    await refusedScope({ scope: 'api.read api.write' }, notGranted('api.read'));
    await refusedScope({ scope: 'openid offline_access' }, notGranted('offline_access'));
    await refusedScope({ aud: [api.clientId], scope: 'reports.read' }, `scope: The scope value reports.read belongs to the resource server ${other.clientId}, which this client may not request as an audience (client metadata aud).`);
    await refusedScope({ scope: 'orders.read' }, `scope: The scope value orders.read belongs to the resource server ${api.clientId}, which this client may not request as an audience (client metadata aud).`);
    await refusedScope({ scope: other.clientId }, `scope: The scope value ${other.clientId} is a client_id this client may not request as an audience (client metadata aud).`);
    await refusedScope({ scope: 'orders.read orders.delete' }, notGranted('orders.delete'), machine.clientId);
    assert.equal((await updateClient(deps, machine.clientId, { scope: 'orders.read orders.write openid' })).client.scope, 'orders.read orders.write openid');
    // A client stored before the rule keeps its values through an unrelated update; a new value is checked.
    await deps.clients.update({ ...machine, scope: 'openid offline_access api.read' });
    assert.equal((await updateClient(deps, machine.clientId, { client_name: 'Renamed' })).client.scope, 'openid offline_access api.read');
    await refusedScope({ scope: 'openid offline_access api.read api.write' }, notGranted('api.write'), machine.clientId);
  });

  test('resource_server and resource_uris (RI-01): a confidential client without grants by default; URIs absolute, no fragment, https or loopback http, resource servers only', async () => {
    const deps = setup();
    const { client, clientSecret } = await registerClient(deps, { client_name: 'Orders API', resource_server: true, resource_uris: ['https://orders.example.com/', 'https://orders.example.com/', 'http://127.0.0.1:9000/api'] });
    assert.deepEqual(client.grantTypes, []);
    assert.deepEqual(client.redirectUris, []);
    assert.equal(typeof clientSecret, 'string');
    assert.deepEqual(clientView(client).resource_uris, ['https://orders.example.com/', 'http://127.0.0.1:9000/api']);
    assert.equal(clientView(client).resource_server, true);
    const refusedMetadata = async (metadata: Record<string, unknown>, message: string) =>
      assert.rejects(registerClient(deps, { client_name: 'x', ...metadata }), (error: unknown) => {
        assert.ok(error instanceof InvalidClientMetadata, String(error));
        assert.equal(error.message, message);
        return true;
      });
    await refusedMetadata({ resource_server: true, token_endpoint_auth_method: 'none' }, 'resource_server: a resource server is a confidential client (it authenticates at introspection); token_endpoint_auth_method "none" cannot be one');
    await refusedMetadata({ grant_types: [], resource_uris: ['https://a.example/'] }, 'resource_uris: only a resource server (resource_server: true) may register resource URIs');
    await refusedMetadata({ resource_server: 'yes' }, 'resource_server: must be true or false');
    await refusedMetadata({ resource_server: true, resource_uris: ['https://a.example/#f'] }, 'resource_uris: "https://a.example/#f" must not contain a fragment (RFC 8707 §2)');
    await refusedMetadata({ resource_server: true, resource_uris: ['/relative'] }, 'resource_uris: "/relative" is not an absolute URI (RFC 8707 §2)');
    await refusedMetadata({ resource_server: true, resource_uris: ['http://api.example/'] }, 'resource_uris: "http://api.example/" must be an https URI (http only on a loopback host)');
    await refusedMetadata({ resource_server: true, resource_uris: ['urn:example:api'] }, 'resource_uris: "urn:example:api" must be an https URI (http only on a loopback host)');
    await refusedMetadata({ resource_server: true, resource_uris: [`https://a.example/${'a'.repeat(2048)}`] }, `resource_uris: "https://a.example/${'a'.repeat(2048)}" must be printable ASCII, at most 2048 characters`);
    await refusedMetadata({ resource_server: true, resource_uris: ['https://user:pw@a.example/'] }, 'resource_uris: "https://user:pw@a.example/" must not contain user information');
    await refusedMetadata({ resource_server: true, resource_uris: 'https://a.example/' }, 'resource_uris: must be an array of strings');
    // Another client's URI is refused, naming it and its holder; the client's own URIs may be registered again.
    await refusedMetadata({ resource_server: true, resource_uris: ['https://orders.example.com/'] }, `resource_uris: "https://orders.example.com/" is already a resource URI of the client ${client.clientId}`);
    assert.deepEqual((await updateClient(deps, client.clientId, { resource_uris: ['https://orders.example.com/', 'https://orders.example.com/v2'] })).client.metadata.resource_uris, ['https://orders.example.com/', 'https://orders.example.com/v2']);
    await assert.rejects(updateClient(deps, client.clientId, { resource_server: false }), (error: unknown) => error instanceof InvalidClientMetadata && error.field === 'resource_uris');
    assert.equal((await updateClient(deps, client.clientId, { resource_server: false, resource_uris: null })).client.metadata.resource_server, false);
  });

  test('a document from the view can be fed back; changing a generated key is refused', async () => {
    const deps = setup();
    const { client } = await registerClient(deps, base);
    await updateClient(deps, client.clientId, clientView(client));
    await assert.rejects(updateClient(deps, client.clientId, { client_id: 'other' }), /client_id/);
  });

  test('turning public drops the secret; turning confidential issues one', async () => {
    const deps = setup();
    const { client } = await registerClient(deps, base);
    const toPublic = await updateClient(deps, client.clientId, { token_endpoint_auth_method: 'none' });
    assert.equal(toPublic.client.secretHash, undefined);
    const back = await updateClient(deps, client.clientId, { token_endpoint_auth_method: 'client_secret_basic' });
    assert.match(back.clientSecret!, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(back.client.secretHash, hashSecret(back.clientSecret!));
  });

  test('rotateClientSecret replaces the hash; public clients have none to rotate', async () => {
    const deps = setup();
    const { client, clientSecret } = await registerClient(deps, base);
    const rotated = await rotateClientSecret(deps, client.clientId);
    assert.notEqual(rotated.clientSecret, clientSecret);
    assert.equal(deps.clients.rows.get(client.clientId)!.secretHash, hashSecret(rotated.clientSecret));
    const pub = await registerClient(deps, { ...base, token_endpoint_auth_method: 'none' });
    await assert.rejects(rotateClientSecret(deps, pub.client.clientId), InvalidClientMetadata);
  });

  test('activate, deactivate and delete; an unknown client_id is ClientNotFound', async () => {
    const deps = setup();
    const { client } = await registerClient(deps, base);
    assert.equal((await setClientActive(deps, client.clientId, false)).active, false);
    assert.equal(deps.clients.rows.get(client.clientId)!.active, false);
    await deleteClient(deps, client.clientId);
    await assert.rejects(deleteClient(deps, client.clientId), ClientNotFound);
    await assert.rejects(setClientActive(deps, 'nope', true), ClientNotFound);
    await assert.rejects(updateClient(deps, 'nope', {}), ClientNotFound);
  });
});

describe('JWT client authentication metadata (RFC 7591 §2, RFC 7523)', () => {
  const EC_KEY = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1', use: 'sig' };
  const KEK = 'a key-encryption key of forty characters.';

  test('private_key_jwt with jwks or jwks_uri: registered without a secret; the keys are echoed (JW-10)', async () => {
    const inline = await register({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [EC_KEY] }, token_endpoint_auth_signing_alg: 'ES256' });
    assert.equal(inline.clientSecret, undefined);
    assert.equal(inline.client.secretHash, undefined);
    assert.deepEqual(clientView(inline.client).jwks, { keys: [EC_KEY] });
    assert.equal(clientView(inline.client).token_endpoint_auth_signing_alg, 'ES256');
    const remote = await register({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://shop.example/jwks.json' });
    assert.equal(clientView(remote.client).jwks_uri, 'https://shop.example/jwks.json');
    assert.equal((await register({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://127.0.0.1:8080/jwks' })).clientSecret, undefined, 'http on loopback');
  });

  test('refused combinations, each with a clear error (JW-10)', async () => {
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [EC_KEY] }, jwks_uri: 'https://shop.example/jwks' }, 'jwks', /cannot both be registered/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt' }, 'token_endpoint_auth_method', /register jwks or jwks_uri/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...EC_KEY, d: 'jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI' }] } }, 'jwks', /private or symmetric key material/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }, 'jwks', /private or symmetric key material/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } }, 'jwks', /has no keys/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks: [EC_KEY] }, 'jwks', /not a JWK Set/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'abc' }] } }, 'jwks', /lacks "y"/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...EC_KEY, use: 'enc' }] } }, 'jwks', /"use" other than sig/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://shop.example/jwks' }, 'jwks_uri', /https URL \(http only on a loopback host\)/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://u:p@shop.example/jwks' }, 'jwks_uri', /user information/);
    await refused({ jwks: { keys: [EC_KEY] } }, 'jwks', /used only by token_endpoint_auth_method private_key_jwt/);
    await refused({ token_endpoint_auth_method: 'client_secret_basic', jwks_uri: 'https://shop.example/jwks' }, 'jwks_uri', /used only by/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [EC_KEY] }, token_endpoint_auth_signing_alg: 'HS256' }, 'token_endpoint_auth_signing_alg', /must be one of RS256, PS256, ES256, EdDSA, Ed25519 for private_key_jwt/);
    await refused({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [EC_KEY] }, token_endpoint_auth_signing_alg: 'none' }, 'token_endpoint_auth_signing_alg', /must be one of/);
    await refused({ token_endpoint_auth_method: 'client_secret_jwt', token_endpoint_auth_signing_alg: 'RS256' }, 'token_endpoint_auth_signing_alg', /must be one of HS256 for client_secret_jwt/);
    await refused({ token_endpoint_auth_method: 'client_secret_basic', token_endpoint_auth_signing_alg: 'RS256' }, 'token_endpoint_auth_signing_alg', /applies only to token_endpoint_auth_method private_key_jwt or client_secret_jwt/);
  });

  test('client_secret_jwt: the secret is shown once, hashed and sealed with the key-encryption key; without one it is refused (JW-11)', async () => {
    await refused({ token_endpoint_auth_method: 'client_secret_jwt' }, 'token_endpoint_auth_method', /needs GATEHOUSE_KEY_ENCRYPTION_KEY/);
    const deps = { ...setup(), keyEncryptionKey: KEK };
    const { client, clientSecret } = await registerClient(deps, { ...base, token_endpoint_auth_method: 'client_secret_jwt' });
    assert.ok(clientSecret);
    assert.equal(client.secretHash, hashSecret(clientSecret));
    assert.equal(openClientSecret(client.secretSealed!, KEK), clientSecret);
    assert.throws(() => openClientSecret(client.secretSealed!, `${KEK}x`), 'only with the key it was sealed with');
    assert.equal(JSON.stringify(clientView(client)).includes(client.secretSealed!), false, 'never shown');
    // Rotation seals the new secret.
    const rotated = await rotateClientSecret(deps, client.clientId);
    assert.equal(openClientSecret(rotated.client.secretSealed!, KEK), rotated.clientSecret);
    // A secret client turned client_secret_jwt gets a new secret (the old one was kept as a hash only).
    const basic = await registerClient(deps, base);
    const turned = await updateClient({ ...deps, clients: deps.clients }, basic.client.clientId, { token_endpoint_auth_method: 'client_secret_jwt' });
    assert.ok(turned.clientSecret && turned.clientSecret !== basic.clientSecret);
    assert.equal(openClientSecret(turned.client.secretSealed!, KEK), turned.clientSecret);
    // ...and back: the sealed copy goes, the hash stays.
    const back = await updateClient(deps, basic.client.clientId, { token_endpoint_auth_method: 'client_secret_basic' });
    assert.equal(back.clientSecret, undefined);
    assert.equal(back.client.secretSealed, undefined);
    assert.equal(back.client.secretHash, hashSecret(turned.clientSecret));
    // Turned private_key_jwt: no shared secret at all.
    const keyed = await updateClient(deps, basic.client.clientId, { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [EC_KEY] } });
    assert.equal(keyed.client.secretHash, undefined);
    await assert.rejects(rotateClientSecret(deps, basic.client.clientId), /uses private_key_jwt and has no secret/);
  });

  test("registration issues and keeps a secret as the method's handler declares (`secret`), for every method of the registry (issue 23, item 4)", async () => {
    const deps = { ...setup(), keyEncryptionKey: KEK };
    for (const method of CLIENT_AUTH_METHODS) {
      const keys = method.method === 'private_key_jwt' ? { jwks: { keys: [EC_KEY] } } : {};
      const { client, clientSecret } = await registerClient(deps, { ...base, token_endpoint_auth_method: method.method, ...keys });
      const kept = { issued: clientSecret !== undefined, hashed: client.secretHash !== undefined, sealed: client.secretSealed !== undefined };
      const declared = { issued: method.secret !== 'none', hashed: method.secret !== 'none', sealed: method.secret === 'sealed' };
      assert.deepEqual(kept, declared, method.method);
      const rotated = rotateClientSecret(deps, client.clientId);
      if (method.secret === 'none') await assert.rejects(rotated, InvalidClientMetadata, method.method);
      else assert.deepEqual({ sealed: (await rotated).client.secretSealed !== undefined }, { sealed: method.secret === 'sealed' }, method.method);
    }
  });
});
