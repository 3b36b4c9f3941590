/**
 * Both use cases of the spec, end to end, with openid-client as the relying party against a real
 * listening gatehouse; the login form is driven over HTTP exactly as a browser would post it.
 * Clients and users are registered through the same use cases as the CLI.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { createUser } from '../../src/identity/users.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, loginThroughForm } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const PASSWORD = 'correct horse battery staple';
const WEB_REDIRECT = 'https://web.example.com/callback';
const NATIVE_REDIRECT = 'http://127.0.0.1/callback';

for (const db of DATABASES) {
  describe(`openid-client as relying party, on ${db.name}`, () => {
    let server: RunningServer;
    let username: string;
    before(async () => {
      server = await startServer(db);
      const { store } = server.gatehouse;
      username = `alice-${Date.now()}`;
      await createUser({ ...store, clock: systemClock, random: cryptoRandom }, { username, password: PASSWORD, givenName: 'Alice', familyName: 'Example', email: 'alice@example.com' }, AS_OPERATOR);
    });
    after(async () => server.close());

    const register = (metadata: Record<string, unknown>) => registerClient({ clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom }, metadata);
    const configure = (clientId: string, secret: string | undefined, auth: oidc.ClientAuth) =>
      // allowInsecureRequests: the test issuer is http on loopback; production issuers are https.
      oidc.discovery(new URL(server.issuer), clientId, secret, auth, { execute: [oidc.allowInsecureRequests] });

    /** Runs the authorization request in a "browser" (cookie jar), logging in if the page asks. */
    async function authorize(config: oidc.Configuration, jar: CookieJar, redirectUri: string, extra: Record<string, string> = {}) {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const params = { redirect_uri: redirectUri, scope: 'openid profile email', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce, ...extra };
      const url = oidc.buildAuthorizationUrl(config, params);
      const first = await browse(url.href, jar);
      const redirect = first.status === 302 ? first : await loginThroughForm({ baseUrl: server.url, jar }, Object.fromEntries(url.searchParams), { username, password: PASSWORD });
      const location = redirect.headers.get('location');
      assert.ok(location, `expected a redirect, got ${redirect.status}`);
      const tokens = await oidc.authorizationCodeGrant(config, new URL(location), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
      return { tokens, loggedIn: first.status !== 302 };
    }

    test('use case 1, web single sign-on: code + PKCE, ID token, userinfo, refresh, revocation', async () => {
      const web = await register({ client_name: 'Web app', redirect_uris: [WEB_REDIRECT], grant_types: ['authorization_code', 'refresh_token'], refresh_tokens: true });
      const config = await configure(web.client.clientId, web.clientSecret, oidc.ClientSecretBasic(web.clientSecret!));
      assert.equal(config.serverMetadata().issuer, server.issuer);

      const { tokens } = await authorize(config, new CookieJar(), WEB_REDIRECT);
      const claims = tokens.claims()!;
      assert.equal(claims.iss, server.issuer);
      assert.equal(claims.aud, web.client.clientId);
      assert.match(claims.session_index as string, /^_[0-9a-f]{40}$/);
      assert.deepEqual(claims.amr, ['pwd']);
      assert.equal(typeof claims.auth_time, 'number');
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.scope, 'openid profile email');
      assert.ok(tokens.refresh_token);

      const userInfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      assert.equal(userInfo.sub, claims.sub);
      assert.equal(userInfo.email, 'alice@example.com');
      assert.equal(userInfo.name, 'Alice Example');
      assert.equal(userInfo.session_index, claims.session_index);

      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.ok(refreshed.access_token);
      assert.equal(refreshed.id_token, undefined, 'no id_token on refresh (spec)');
      assert.equal((await oidc.fetchUserInfo(config, refreshed.access_token, claims.sub)).sub, claims.sub);

      await oidc.tokenRevocation(config, refreshed.refresh_token ?? tokens.refresh_token!);
      await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token!), (error: oidc.ResponseBodyError) => error.error === 'invalid_grant');
    });

    test('use case 1, single sign-on: a second client in the same browser gets a code without logging in', async () => {
      const jar = new CookieJar();
      const first = await register({ client_name: 'First', redirect_uris: [WEB_REDIRECT] });
      const second = await register({ client_name: 'Second', redirect_uris: ['https://second.example.com/cb'], token_endpoint_auth_method: 'client_secret_post' });
      const one = await authorize(await configure(first.client.clientId, first.clientSecret, oidc.ClientSecretBasic(first.clientSecret!)), jar, WEB_REDIRECT);
      const two = await authorize(await configure(second.client.clientId, second.clientSecret, oidc.ClientSecretPost(second.clientSecret!)), jar, 'https://second.example.com/cb');
      assert.equal(one.loggedIn, true);
      assert.equal(two.loggedIn, false, 'no login page the second time');
      assert.equal(two.tokens.claims()!.sub, one.tokens.claims()!.sub);
      assert.equal(two.tokens.claims()!.session_index, one.tokens.claims()!.session_index);
      assert.equal(two.tokens.claims()!.auth_time, one.tokens.claims()!.auth_time);
    });

    test('use case 2, native app + resource server: the resource server validates the token by introspection', async () => {
      const native = await register({ client_name: 'Native app', application_type: 'native', redirect_uris: [NATIVE_REDIRECT], token_endpoint_auth_method: 'none', code_challenge_method: 'S256' });
      const api = await register({ client_name: 'Resource server', grant_types: [] });
      const nativeConfig = await configure(native.client.clientId, undefined, oidc.None());
      // A loopback redirect may use any port (RFC 8252 §7.3).
      const { tokens } = await authorize(nativeConfig, new CookieJar(), 'http://127.0.0.1:53117/callback');
      assert.equal(tokens.refresh_token, undefined, 'refresh tokens only for clients configured for them');

      const rsConfig = await configure(api.client.clientId, api.clientSecret, oidc.ClientSecretBasic(api.clientSecret!));
      const introspection = await oidc.tokenIntrospection(rsConfig, tokens.access_token);
      assert.equal(introspection.active, true);
      assert.equal(introspection.client_id, native.client.clientId);
      assert.equal(introspection.aud, api.client.clientId);
      assert.equal(introspection.sub, tokens.claims()!.sub);
      assert.equal(introspection.token_type, 'access_token');
      assert.equal(introspection.scope, 'openid profile email');
      assert.equal(introspection.session_index, tokens.claims()!.session_index);

      await oidc.tokenRevocation(nativeConfig, tokens.access_token);
      assert.deepEqual(await oidc.tokenIntrospection(rsConfig, tokens.access_token), { active: false });
    });
  });
}
