/**
 * JWT access tokens end to end (RFC 9068; issue 13, item 3): openid-client signs in at a real
 * listening gatehouse and gets tokens for the example resource server (examples/resource-server,
 * run as its own process), which validates a JWT access token locally with jose against the
 * discovery jwks_uri and introspects an opaque one. Clients are registered through the same use
 * case as the CLI.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as oidc from 'openid-client';
import { createUser } from '../../src/identity/users.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { DATABASES } from '../helpers/databases.ts';
import { CookieJar, loginThroughForm } from '../helpers/fixtures.ts';
import { freePort, startServer, type RunningServer } from '../helpers/server.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PASSWORD = 'correct horse battery staple';
const REDIRECT = 'https://app.example.com/callback';

for (const db of DATABASES) {
  describe(`the example resource server with JWT access tokens, on ${db.name}`, () => {
    let server: RunningServer;
    let username: string;
    let userId: string;
    let rsClientId: string;
    let otherRsClientId: string;
    let hello: string;
    let stopResourceServer: () => Promise<void>;
    let resourceServerOutput: () => string;

    before(async () => {
      server = await startServer(db);
      const { store } = server.gatehouse;
      const deps = { clients: store.clients, transaction: store.transaction, clock: systemClock, random: cryptoRandom };
      username = `carol-${Date.now()}`;
      userId = (await createUser({ ...store, clock: systemClock, random: cryptoRandom }, { username, password: PASSWORD, givenName: 'Carol', familyName: 'Example' }, AS_OPERATOR)).id;
      const rs = await registerClient(deps, { client_name: 'Resource server example', resource_server: true, access_token_format: 'jwt' });
      rsClientId = rs.client.clientId;
      otherRsClientId = (await registerClient(deps, { client_name: 'Another API', resource_server: true, access_token_format: 'jwt', access_token_signed_response_alg: 'ES256' })).client.clientId;

      const port = await freePort();
      hello = `http://127.0.0.1:${port}/hello`;
      const child = spawn(process.execPath, ['examples/resource-server/server.ts'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ISSUER: server.issuer, CLIENT_ID: rsClientId, CLIENT_SECRET: rs.clientSecret!, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      resourceServerOutput = () => output;
      const exited = new Promise((resolve) => child.once('close', resolve));
      stopResourceServer = async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      };
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the resource server did not start\n${output}`)), 15_000);
        child.stdout.on('data', () => {
          if (/listening on/.test(output)) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('close', () => reject(new Error(`the resource server exited\n${output}`)));
      });
    });
    after(async () => {
      await stopResourceServer?.();
      await server.close();
    });

    /** Signs in with openid-client (code + PKCE) and returns its token response. */
    async function signIn(scope: string) {
      const app = await registerClient({ clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom }, { client_name: 'App', redirect_uris: [REDIRECT], aud: [rsClientId, otherRsClientId] });
      const config = await oidc.discovery(new URL(server.issuer), app.client.clientId, app.clientSecret, oidc.ClientSecretBasic(app.clientSecret!), { execute: [oidc.allowInsecureRequests] });
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });
      const redirect = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, Object.fromEntries(url.searchParams), { username, password: PASSWORD });
      const tokens = await oidc.authorizationCodeGrant(config, new URL(redirect.headers.get('location')!), { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
      return { config, tokens };
    }

    async function callApi(token: string): Promise<{ status: number; body: Record<string, unknown>; challenge: string | null }> {
      const response = await fetch(hello, { headers: { authorization: `Bearer ${token}` } });
      return { status: response.status, body: (await response.json()) as Record<string, unknown>, challenge: response.headers.get('www-authenticate') };
    }

    test('openid-client signs in and gets a JWT access token; the example resource server validates it locally, and refuses an opaque one meant for no resource server', async () => {
      const scope = `openid profile ${rsClientId}`;
      const { config, tokens } = await signIn(scope);
      assert.equal(tokens.access_token.split('.').length, 3, 'a JWT access token');
      assert.equal(tokens.expires_in, 300);
      const api = await callApi(tokens.access_token);
      assert.equal(api.status, 200, `${JSON.stringify(api.body)}\n${resourceServerOutput()}`);
      assert.deepEqual(api.body, { message: `Hello, ${userId}!`, sub: userId, scope, client_id: config.clientMetadata().client_id, validated: 'jwt' });
      // openid-client's UserInfo call accepts the JWT access token like any other.
      const info = await oidc.fetchUserInfo(config, tokens.access_token, userId);
      assert.equal(info.preferred_username, username);

      // Without the resource server in scope the token is opaque and, at introspection, meant for no
      // resource server: active, yet refused, since the example checks token_audiences (issue 22 item 11).
      const opaque = await signIn('openid profile');
      assert.equal(opaque.tokens.access_token.includes('.'), false);
      const introspected = await callApi(opaque.tokens.access_token);
      assert.equal(introspected.status, 401, JSON.stringify(introspected.body));
      assert.equal(introspected.challenge, 'Bearer error="invalid_token", error_description="The access token is not active or not meant for this resource server"');
    });

    test('a JWT for another resource server is refused locally (aud); a revoked JWT is still accepted locally until it expires, but introspection reports it inactive', async () => {
      const other = await signIn(`openid ${otherRsClientId}`);
      const refused = await callApi(other.tokens.access_token);
      assert.equal(refused.status, 401);
      assert.match(refused.challenge ?? '', /^Bearer error="invalid_token"/);

      const { config, tokens } = await signIn(`openid ${rsClientId}`);
      await oidc.tokenRevocation(config, tokens.access_token);
      // RFC 9068 §5 leaves a locally validated token alone until exp: the reason for its short life.
      assert.equal((await callApi(tokens.access_token)).status, 200);
      assert.deepEqual(await oidc.tokenIntrospection(config, tokens.access_token), { active: false });
      await assert.rejects(oidc.fetchUserInfo(config, tokens.access_token, oidc.skipSubjectCheck), (error: unknown) => (error as { status?: number }).status === 401);
    });
  });
}
