/**
 * JWT client authentication end to end (RFC 7523 §2.2, OIDC Core §9), with openid-client as the
 * relying party authenticating by `PrivateKeyJwt` and `ClientSecretJwt` against a real listening
 * gatehouse: the authorization code and refresh grants, introspection and revocation. Clients are
 * registered through the same use case as `gatehouse client create`, with RFC 7591 metadata.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { createUser } from '../../src/identity/users.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { signingKey, TEST_KEK } from '../helpers/client-assertions.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, loginThroughForm } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const PASSWORD = 'correct horse battery staple';
const REDIRECT = 'https://web.example.com/callback';

for (const db of DATABASES) {
  describe(`openid-client with private_key_jwt and client_secret_jwt, on ${db.name}`, () => {
    let server: RunningServer;
    let username: string;
    /** Serves a client's key set at its jwks_uri. */
    let keysServer: Server;
    let jwksBody = '{}';
    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_KEY_ENCRYPTION_KEY: TEST_KEK } });
      username = `jwt-${Date.now()}`;
      await createUser({ ...server.gatehouse.store, clock: systemClock, random: cryptoRandom }, { username, password: PASSWORD, givenName: 'Jo', familyName: 'Key', email: 'jo@example.com' }, AS_OPERATOR);
      keysServer = createServer((_, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(jwksBody));
      await new Promise<void>((resolve) => keysServer.listen(0, '127.0.0.1', resolve));
    });
    after(async () => {
      keysServer.closeAllConnections();
      await new Promise((resolve) => keysServer.close(resolve));
      await server.close();
    });

    const register = (metadata: Record<string, unknown>) =>
      registerClient({ clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom, keyEncryptionKey: TEST_KEK }, { client_name: 'JWT client', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], ...metadata });
    const configure = (clientId: string, auth: oidc.ClientAuth) => oidc.discovery(new URL(server.issuer), clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] });

    async function codeFlow(config: oidc.Configuration) {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid profile', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });
      const jar = new CookieJar();
      const first = await browse(url.href, jar);
      const redirect = first.status === 302 ? first : await loginThroughForm({ baseUrl: server.url, jar }, Object.fromEntries(url.searchParams), { username, password: PASSWORD });
      return oidc.authorizationCodeGrant(config, new URL(redirect.headers.get('location')!), { pkceCodeVerifier: verifier, expectedState: state });
    }

    /** The code flow, a refresh, introspection and revocation, all authenticated by `auth`. */
    async function everyEndpoint(clientId: string, auth: oidc.ClientAuth) {
      const config = await configure(clientId, auth);
      const tokens = await codeFlow(config);
      assert.ok(tokens.refresh_token);
      assert.equal(tokens.claims()!.aud, clientId);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token);
      const introspection = await oidc.tokenIntrospection(config, refreshed.access_token);
      assert.equal(introspection.active, true);
      assert.equal(introspection.client_id, clientId);
      await oidc.tokenRevocation(config, refreshed.refresh_token ?? tokens.refresh_token);
      assert.deepEqual(await oidc.tokenIntrospection(config, refreshed.access_token), { active: false });
    }

    test('discovery advertises both methods and their algorithms, which openid-client then uses (JW-01)', async () => {
      const metadata = (await configure('x', oidc.None())).serverMetadata();
      for (const endpoint of ['token', 'introspection', 'revocation'] as const) {
        assert.ok((metadata[`${endpoint}_endpoint_auth_methods_supported`] as string[]).includes('private_key_jwt'));
        assert.ok((metadata[`${endpoint}_endpoint_auth_methods_supported`] as string[]).includes('client_secret_jwt'));
      }
    });

    // openid-client signs an Ed25519 key as alg Ed25519 (RFC 9864), not EdDSA.
    for (const alg of ['ES256', 'RS256', 'PS256', 'Ed25519']) {
      test(`private_key_jwt with an inline jwks (${alg}): code, refresh, introspection, revocation (JW-01)`, async () => {
        const key = await signingKey(alg);
        const { client, clientSecret } = await register({ token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: alg, jwks: { keys: [key.publicJwk] } });
        assert.equal(clientSecret, undefined, 'a private_key_jwt client holds no shared secret');
        await everyEndpoint(client.clientId, oidc.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }));
      });
    }

    test('private_key_jwt with a jwks_uri (JW-01, JW-09)', async () => {
      const key = await signingKey('ES256');
      jwksBody = JSON.stringify({ keys: [key.publicJwk] });
      const { client } = await register({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `http://127.0.0.1:${(keysServer.address() as { port: number }).port}/jwks.json` });
      await everyEndpoint(client.clientId, oidc.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }));
    });

    test('client_secret_jwt with the secret shown at registration: code, refresh, introspection, revocation (JW-08)', async () => {
      const { client, clientSecret } = await register({ token_endpoint_auth_method: 'client_secret_jwt' });
      assert.ok(clientSecret);
      assert.ok(client.secretSealed?.startsWith('v1.'), 'kept sealed, not in the clear');
      assert.ok(!client.secretSealed!.includes(clientSecret));
      await everyEndpoint(client.clientId, oidc.ClientSecretJwt(clientSecret));
      // The same client with the wrong secret is refused.
      const wrong = await configure(client.clientId, oidc.ClientSecretJwt(`${clientSecret}x`));
      // A 401 with its WWW-Authenticate challenge (RFC 6749 §5.2), which openid-client raises as such.
      await assert.rejects(oidc.tokenIntrospection(wrong, 'x'), (error) => error instanceof oidc.WWWAuthenticateChallengeError && error.status === 401);
    });
  });
}
