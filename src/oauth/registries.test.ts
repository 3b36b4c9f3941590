// The grant and client-auth registries are the single source of what the token, introspection and
// revocation endpoints implement: discovery, the repeated-parameter checks and registration are
// built from them. These tests pin each derived list to the registries (equality, both ways) and
// each declared parameter list to what the code actually reads.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Client } from '../domain/client.ts';
import { CLIENT_AUTH_METHODS, CLIENT_AUTH_PARAMS, authMethodsFor, secretOf } from './client-auth/registry.ts';
import type { ClientAuthRequest } from './client-auth/method.ts';
import { JWT_BEARER_ASSERTION } from './client-auth/jwt-assertion.ts';
import { parseClientMetadata, InvalidClientMetadata } from './client-metadata.ts';
import type { OAuthDeps } from './deps.ts';
import { discoveryDocument } from './discovery.ts';
import { InvalidRequest } from './errors.ts';
import { DEVICE_AUTHORIZATION_PARAMS, deviceAuthorizationEndpoint } from './device/device-authorization.ts';
import { INTROSPECTION_PARAMS, introspect } from './introspect.ts';
import { GRANTS } from './grants/registry.ts';
import type { RawParams } from './params.ts';
import { REVOCATION_PARAMS, revoke } from './revoke.ts';
import { TOKEN_PARAMS, tokenEndpoint } from './token-endpoint.ts';

/** Registered values a client might name (IANA OAuth Parameters, OIDC Core), implemented or not. */
const KNOWN_GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials', 'password', 'implicit', 'urn:ietf:params:oauth:grant-type:device_code', 'urn:ietf:params:oauth:grant-type:jwt-bearer'];
const KNOWN_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none', 'client_secret_jwt', 'private_key_jwt', 'tls_client_auth', 'self_signed_tls_client_auth'];

/** `values` as a body whose reads are recorded in `read`. */
function recordingBody(values: Record<string, string>, read: Set<string>): RawParams {
  return new Proxy(values, {
    get(target, key) {
      if (typeof key === 'string') read.add(key);
      return typeof key === 'string' ? target[key] : undefined;
    },
  }) as RawParams;
}

/** A JWT with iss = sub = 'c' and a made-up signature: enough to be recognised and read, never verified here. */
const unsignedJwt = (alg: string) => [{ alg, typ: 'JWT' }, { iss: 'c', sub: 'c' }].map((part) => Buffer.from(JSON.stringify(part)).toString('base64url')).join('.') + '.sig';

/** A body in which `name` is sent twice and nothing else is. */
const repeated = (name: string): RawParams => ({ [name]: ['a', 'b'] });
const sorted = (list: Iterable<string>) => [...list].sort();

const untouchedDeps = new Proxy({}, { get: () => assert.fail('the repeated-parameter check must come before anything else') }) as OAuthDeps;

describe('grant and client-auth registries', () => {
  test('discovery lists exactly the registered grants and, per endpoint, exactly the methods it accepts', () => {
    const metadata = discoveryDocument({ issuer: 'https://sso.example', clientAuth: { keyEncryptionKey: true } });
    assert.deepEqual(metadata.grant_types_supported, GRANTS.map((grant) => grant.type));
    const all = CLIENT_AUTH_METHODS.map((method) => method.method);
    const confidentialOnly = CLIENT_AUTH_METHODS.filter((method) => !method.public).map((method) => method.method);
    assert.deepEqual(metadata.token_endpoint_auth_methods_supported, all);
    assert.deepEqual(metadata.revocation_endpoint_auth_methods_supported, all);
    // RFC 7662 §2.1: introspection needs a confidential caller, so `none` is not offered there.
    assert.deepEqual(metadata.introspection_endpoint_auth_methods_supported, confidentialOnly);
    // The algorithms are those the JWT methods verify with, and nothing else (RFC 8414 §2).
    const algs = [...CLIENT_AUTH_METHODS.find((method) => method.method === 'client_secret_jwt')!.signingAlgs, ...CLIENT_AUTH_METHODS.find((method) => method.method === 'private_key_jwt')!.signingAlgs];
    assert.deepEqual(algs, ['HS256', 'RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519']);
    for (const endpoint of ['token', 'introspection', 'revocation']) assert.deepEqual(metadata[`${endpoint}_endpoint_auth_signing_alg_values_supported`], algs, endpoint);
    // RFC 8628 §4: the device authorization endpoint is advertised, where the routes mount it; public clients may use it.
    assert.equal(metadata.device_authorization_endpoint, 'https://sso.example/oauth2/device_authorization');
    assert.deepEqual(authMethodsFor('device_authorization', { keyEncryptionKey: true }), all);
  });

  test('a method whose requirement the configuration does not meet is not offered, nor are algorithms only it accepts (issue 22, item 6)', () => {
    const metadata = discoveryDocument({ issuer: 'https://sso.example', clientAuth: { keyEncryptionKey: false } });
    const usable = CLIENT_AUTH_METHODS.filter((method) => method.requires.length === 0);
    assert.deepEqual(usable.map((method) => method.method), ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'], 'only client_secret_jwt needs GATEHOUSE_KEY_ENCRYPTION_KEY');
    assert.deepEqual(metadata.token_endpoint_auth_methods_supported, usable.map((method) => method.method));
    assert.deepEqual(metadata.revocation_endpoint_auth_methods_supported, usable.map((method) => method.method));
    assert.deepEqual(metadata.introspection_endpoint_auth_methods_supported, usable.filter((method) => !method.public).map((method) => method.method));
    for (const endpoint of ['token', 'introspection', 'revocation']) assert.deepEqual(metadata[`${endpoint}_endpoint_auth_signing_alg_values_supported`], ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'], endpoint);
    assert.deepEqual(authMethodsFor('device_authorization', { keyEncryptionKey: false }), usable.map((method) => method.method));
  });

  test('each grant declares exactly the body parameters its handler reads', async () => {
    const stop = new Error('stop at the store');
    // Anything but the clock stops the handler: it must have read every parameter before it uses the store (or anything else).
    const deps = new Proxy({ clock: { now: () => 0 } }, {
      get(target, key) {
        if (key === 'clock') return target.clock;
        throw stop;
      },
    }) as unknown as OAuthDeps;
    for (const grant of GRANTS) {
      const read = new Set<string>();
      // Every parameter present, so the handler reads all of them before it reaches the store.
      const body = recordingBody(Object.fromEntries(KNOWN_PARAMS.map((name) => [name, name === 'resource' ? 'https://rs.example/' : 'x'])), read);
      await assert.rejects(grant.handle(deps, { metadata: {} } as Client, body), (error) => error === stop, grant.type);
      assert.deepEqual(sorted(read), sorted([...grant.params, ...grant.repeatable]), grant.type);
    }
  });

  test('each client-auth method declares exactly the body parameters it reads to recognise and read a request', () => {
    const requests: Record<string, ClientAuthRequest> = {
      client_secret_basic: { authorization: `Basic ${Buffer.from('c:s').toString('base64')}`, body: {} },
      client_secret_post: { authorization: undefined, body: { client_id: 'c', client_secret: 's' } },
      none: { authorization: undefined, body: { client_id: 'c' } },
      private_key_jwt: { authorization: undefined, body: { client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: unsignedJwt('RS256') } },
      client_secret_jwt: { authorization: undefined, body: { client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: unsignedJwt('HS256') } },
    };
    assert.deepEqual(sorted(Object.keys(requests)), sorted(CLIENT_AUTH_METHODS.map((method) => method.method)));
    for (const method of CLIENT_AUTH_METHODS) {
      const read = new Set<string>();
      const request = { ...requests[method.method]!, body: recordingBody(requests[method.method]!.body as Record<string, string>, read) };
      // The dispatcher picks the first method that recognises the request: this one.
      assert.equal(CLIENT_AUTH_METHODS.find((candidate) => candidate.detect(request)), method);
      read.clear();
      assert.ok(method.detect(request));
      assert.equal(method.present(request).clientId, 'c');
      assert.deepEqual(sorted(read), sorted(method.params), method.method);
    }
  });

  test('each client-auth method declares how its clients hold a secret (issue 23, item 4)', () => {
    // hashed: the secret is presented itself; sealed: an HMAC keyed by it (docs/decisions.md J1); none: no secret.
    assert.deepEqual(Object.fromEntries(CLIENT_AUTH_METHODS.map((method) => [method.method, method.secret])), {
      client_secret_basic: 'hashed',
      client_secret_post: 'hashed',
      client_secret_jwt: 'sealed',
      private_key_jwt: 'none',
      none: 'none',
    });
    // A client that registered no method (an older one) may use either method that presents its secret: it holds a hashed one.
    assert.equal(secretOf(undefined), 'hashed');
    for (const method of CLIENT_AUTH_METHODS) assert.equal(secretOf(method.method), method.secret, method.method);
  });

  test("the token endpoint refuses repeated exactly grant_type, the grants' parameters and the client-auth ones", async () => {
    const expected = new Set(['grant_type', ...GRANTS.flatMap((grant) => grant.params), ...CLIENT_AUTH_PARAMS]);
    assert.deepEqual(sorted(TOKEN_PARAMS), sorted(expected));
    for (const name of KNOWN_PARAMS) {
      const refused = await tokenEndpoint(untouchedDeps, undefined, repeated(name)).then(
        () => false,
        (error) => error instanceof InvalidRequest && error.description === `The ${name} parameter is repeated.`,
      );
      assert.equal(refused, expected.has(name), name);
    }
  });

  test('introspection, revocation and device authorization refuse repeated exactly their own parameters and the client-auth ones', async () => {
    for (const [endpoint, own] of [[introspect, INTROSPECTION_PARAMS], [revoke, REVOCATION_PARAMS], [deviceAuthorizationEndpoint, DEVICE_AUTHORIZATION_PARAMS]] as const) {
      const expected = new Set([...own, ...CLIENT_AUTH_PARAMS]);
      for (const name of KNOWN_PARAMS) {
        const refused = await (endpoint as (deps: OAuthDeps, authorization: string | undefined, body: RawParams) => Promise<unknown>)(untouchedDeps, undefined, repeated(name)).then(
          () => false,
          (error) => error instanceof InvalidRequest && error.description === `The ${name} parameter is repeated.`,
        );
        assert.equal(refused, expected.has(name), `${endpoint.name}: ${name}`);
      }
    }
  });

  test('registration accepts exactly the registered grant types and auth methods', () => {
    const accepts = (document: Record<string, unknown>) => {
      try {
        parseClientMetadata({ client_name: 'c', redirect_uris: ['https://rp.example/cb'], ...document });
        return true;
      } catch (error) {
        if (error instanceof InvalidClientMetadata) return false;
        throw error;
      }
    };
    assert.deepEqual(KNOWN_GRANT_TYPES.filter((type) => accepts({ grant_types: [type] })), GRANTS.map((grant) => grant.type));
    // private_key_jwt is registered with the keys it needs (a jwks_uri).
    const withKeys = (method: string) => (method === 'private_key_jwt' ? { jwks_uri: 'https://rp.example/jwks.json' } : {});
    assert.deepEqual(sorted(KNOWN_AUTH_METHODS.filter((method) => accepts({ token_endpoint_auth_method: method, ...withKeys(method) }))), sorted(CLIENT_AUTH_METHODS.map((method) => method.method)));
  });
});

/** Every parameter name any of the three endpoints might read, plus some none does. */
const KNOWN_PARAMS = ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'client_id', 'client_secret', 'token', 'token_type_hint', 'client_assertion', 'client_assertion_type', 'device_code', 'username', 'password', 'state', 'nonce', 'resource', 'audience'];
