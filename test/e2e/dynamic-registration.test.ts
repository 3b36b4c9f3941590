/**
 * RFC 7591 dynamic client registration end to end with a standard client library: openid-client
 * v6 `dynamicClientRegistration()` registers against a real listening gatehouse with an initial
 * access token an administrator minted, then uses what it was given: client_credentials, and the
 * code flow with PKCE (through the login form and, the client being self-registered, the consent
 * page), driven over HTTP exactly as a browser would post it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { createUser } from '../../src/identity/users.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { mintInitialAccessToken } from '../../src/oauth/dynamic-registration.ts';
import { DATABASES } from '../helpers/databases.ts';
import { CookieJar, formAction, formFields, loginThroughForm, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const PASSWORD = 'dynamic registration password 1';
const REDIRECT = 'https://registered.example.com/callback';

for (const db of DATABASES) {
  describe(`openid-client dynamic client registration on ${db.name}`, () => {
    let server: RunningServer;
    let username: string;
    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_DYNAMIC_REGISTRATION: 'initial_access_token' } });
      username = `dora-${Date.now()}`;
      await createUser({ ...server.gatehouse.store, clock: systemClock, random: cryptoRandom }, { username, password: PASSWORD, givenName: 'Dora', familyName: 'Example', email: 'dora@example.com' }, AS_OPERATOR);
    });
    after(async () => server.close());

    const mint = async (uses = 1) => (await mintInitialAccessToken({ registrations: server.gatehouse.store.registrations, clock: systemClock, random: cryptoRandom }, { expiresIn: 600, uses, createdBy: 'test' })).value;
    // allowInsecureRequests: the test issuer is http on loopback; production issuers are https.
    const insecure = { execute: [oidc.allowInsecureRequests] };

    test('dynamicClientRegistration with an initial access token: the registered client gets a client_credentials token and signs a user in with code + PKCE after consent (DR-11)', async () => {
      const initialAccessToken = await mint();
      const metadata = { client_name: 'Registered by openid-client', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'client_credentials'], token_endpoint_auth_method: 'client_secret_basic' };
      const config = await oidc.dynamicClientRegistration(new URL(server.issuer), metadata, undefined, { ...insecure, initialAccessToken });
      const registered = config.clientMetadata();
      assert.match(registered.client_id, /^[0-9a-f-]{36}$/);
      assert.equal(typeof registered.client_secret, 'string');
      assert.equal(registered.registration_client_uri, `${server.issuer}/oauth2/register/${registered.client_id}`);
      assert.equal(registered.client_secret_expires_at, 0);

      // openid-client authenticates as the registration answered (client_secret_basic).
      const machine = await oidc.discovery(new URL(server.issuer), registered.client_id, registered.client_secret as string, oidc.ClientSecretBasic(registered.client_secret as string), insecure);
      const machineToken = await oidc.clientCredentialsGrant(machine);
      assert.equal(machineToken.token_type.toLowerCase(), 'bearer');

      const jar = new CookieJar();
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(machine, { redirect_uri: REDIRECT, scope: 'openid profile', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });
      const consentPage = await loginThroughForm({ baseUrl: server.url, jar }, Object.fromEntries(url.searchParams), { username, password: PASSWORD });
      assert.equal(consentPage.status, 200, 'a self-registered client asks the user first (decision DR6)');
      const html = await consentPage.text();
      assert.match(html, /Registered by openid-client/);
      const allowed = await submit(new URL(formAction(html), server.url).toString(), [...formFields(html), ['decision', 'allow']], jar);
      const location = allowed.headers.get('location') ?? '';
      assert.ok(location.startsWith(REDIRECT), `expected the redirect, got ${allowed.status}`);
      const tokens = await oidc.authorizationCodeGrant(machine, new URL(location), { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
      assert.equal(tokens.claims()?.aud, registered.client_id);
    });

    test('the smallest registration openid-client can send (redirect_uris only) works; the consent page names the client by its client_id (DR-14)', async () => {
      const config = await oidc.dynamicClientRegistration(new URL(server.issuer), { redirect_uris: [REDIRECT] }, undefined, { ...insecure, initialAccessToken: await mint() });
      const registered = config.clientMetadata();
      assert.equal(registered.client_name, registered.client_id);
      const client = await oidc.discovery(new URL(server.issuer), registered.client_id, registered.client_secret as string, oidc.ClientSecretBasic(registered.client_secret as string), insecure);
      const url = oidc.buildAuthorizationUrl(client, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' });
      const consentPage = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, Object.fromEntries(url.searchParams), { username, password: PASSWORD });
      assert.equal(consentPage.status, 200);
      assert.match(await consentPage.text(), new RegExp(registered.client_id));
    });

    test('dynamicClientRegistration without an initial access token, or with one used up, is refused with a 401 Bearer challenge (DR-11)', async () => {
      const metadata = { client_name: 'Uninvited', redirect_uris: [REDIRECT] };
      /** openid-client's WWWAuthenticateChallengeError: the status and the challenge's parameters. */
      const challenged = (parameters: Record<string, string>) => (error: unknown) => {
        const e = error as { code?: string; status?: number; cause?: { scheme: string; parameters: Record<string, string> }[] };
        assert.deepEqual([e.code, e.status, e.cause?.[0]?.scheme], ['OAUTH_WWW_AUTHENTICATE_CHALLENGE', 401, 'bearer']);
        for (const [name, value] of Object.entries(parameters)) assert.equal(e.cause?.[0]?.parameters[name], value, name);
        return true;
      };
      // RFC 6750 §3.1: no token, no error attribute.
      await assert.rejects(oidc.dynamicClientRegistration(new URL(server.issuer), metadata, undefined, insecure), challenged({ realm: 'gatehouse' }));
      const once = await mint(1);
      await oidc.dynamicClientRegistration(new URL(server.issuer), metadata, undefined, { ...insecure, initialAccessToken: once });
      await assert.rejects(oidc.dynamicClientRegistration(new URL(server.issuer), metadata, undefined, { ...insecure, initialAccessToken: once }), challenged({ error: 'invalid_token' }));
    });
  });
}
