/**
 * Audience scopes under the client's `aud` allow-list (security test, issue 10, finding 1). A scope
 * value that is another registered client's client_id asks for a token meant for that client
 * (Ubisecure: `scope=openid <API client_id>`); a client gets it only when its `aud` metadata names
 * that client_id, and the identity API accepts a token only while its client's `aud` still allows
 * the API. Everything else is invalid_scope at the authorization and token endpoints, and 401 at
 * the identity API.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { addMember, createGroup } from '../../src/identity/groups.ts';
import { verifyPassword } from '../../src/identity/passwords.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { updateClient } from '../../src/oauth/client-registration.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, loginThroughForm, pkce, redirectParams, RP_REDIRECT_URI } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertErrorRedirect } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { aToken } from '../helpers/store.ts';
import { call } from './identity-api/helpers.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const PASSWORD = 'correct horse battery';
const VICTIM_PASSWORD = 'the victim knows this one';
const API_GROUP = 'Identity API Users';

for (const db of DATABASES) {
  describe(`audience scopes and the aud allow-list on ${db.name}`, () => {
    let server: RunningServer;
    let audit: AuditCapture;
    let api: Client;
    /** A member of the API group, signed in to gatehouse in `memberJar` (a single sign-on session). */
    let member: User;
    let memberJar: CookieJar;
    let victim: User;

    before(async () => {
      audit = new AuditCapture();
      const apiClientId = `identity-api-${randomBytes(8).toString('hex')}`;
      server = await startServer(db, { audit, env: { GATEHOUSE_API_CLIENT_ID: apiClientId, GATEHOUSE_API_USERNAME: 'api-account', GATEHOUSE_API_PASSWORD: 'api account password' } });
      const store = server.gatehouse.store;
      ({ client: api } = await createTestClient(store, { clientId: apiClientId, name: 'Identity API', grantTypes: [], redirectUris: [] }));
      await createGroup({ ...store, clock: systemClock, random: cryptoRandom }, { name: API_GROUP }, AS_OPERATOR);
      member = await createTestUser(store, { password: PASSWORD });
      await addMember(store, API_GROUP, member.id, AS_OPERATOR);
      victim = await createTestUser(store, { password: VICTIM_PASSWORD });
      // The member signs in through an ordinary client: gatehouse now has their SSO session.
      const { client: portal } = await createTestClient(store);
      memberJar = new CookieJar();
      const signedIn = await loginThroughForm({ baseUrl: server.url, jar: memberJar }, { response_type: 'code', client_id: portal.clientId, redirect_uri: RP_REDIRECT_URI, scope: 'openid', state: 's' }, { username: member.username, password: PASSWORD });
      assert.ok(redirectParams(signedIn).get('code'));
    });
    after(async () => server.close());

    const registrationDeps = () => ({ clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom });

    /** A silent authorization request in the member's browser (prompt=none: no page is shown). */
    async function silentAuthorization(client: Client, scope: string, verifierOut?: { verifier?: string }): Promise<Response> {
      const { verifier, challenge } = pkce();
      if (verifierOut) verifierOut.verifier = verifier;
      return browse(authorizationUrl(server.url, { response_type: 'code', client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, scope, state: 'st', prompt: 'none', code_challenge: challenge, code_challenge_method: 'S256' }), memberJar);
    }

    /** The token response for a silent authorization that must succeed. */
    async function tokens(client: Client, secret: string | undefined, scope: string): Promise<Record<string, unknown>> {
      const out: { verifier?: string } = {};
      const code = assertCodeRedirect(await silentAuthorization(client, scope, out), { redirectUri: RP_REDIRECT_URI, state: 'st', issuer: server.issuer });
      const form = { grant_type: 'authorization_code', code, redirect_uri: RP_REDIRECT_URI, code_verifier: out.verifier! };
      const response = secret === undefined ? await postForm(`${server.url}/uas/oauth2/token`, { ...form, client_id: client.clientId }) : await postForm(`${server.url}/uas/oauth2/token`, form, { authorization: basic(client.clientId, secret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body;
    }

    function setPassword(token: string, user: User, password: string) {
      return call(server, 'PUT', `/2.0/users/${user.id}`, { authorization: `Bearer ${token}`, contentType: 'application/json', body: JSON.stringify({ attributes: { password: [password] } }) });
    }

    async function victimPasswordIs(password: string): Promise<boolean> {
      return verifyPassword((await server.gatehouse.store.users.getCredentials(victim.username))!.passwordHash, password);
    }

    test('finding 1: a public client without aud asks silently for the API audience: invalid_scope, no code, no token; an API-scope token it holds cannot set a password', async () => {
      const { client: attacker } = await createTestClient(server.gatehouse.store, { tokenEndpointAuthMethod: 'none', codeChallengeMethod: 'S256', grantTypes: ['authorization_code'] });
      audit.clear();
      const params = assertErrorRedirect(await silentAuthorization(attacker, `openid ${api.clientId}`), { redirectUri: RP_REDIRECT_URI, error: 'invalid_scope', state: 'st', issuer: server.issuer });
      assert.equal(params.get('error_description'), `The scope value ${api.clientId} is a client_id this client may not request as an audience (client metadata aud).`);
      assert.deepEqual(audit.of('token.issued'), [], 'no token was issued');
      // A token with the API audience issued to this client before the fix (as the old code did).
      const raw = randomBytes(32).toString('base64url');
      const now = Date.now();
      await server.gatehouse.store.tokens.insert(aToken({ tokenHash: hashSecret(raw), clientId: attacker.clientId, userId: member.id, scope: `openid ${api.clientId}`, createdAt: now, expiresAt: now + 600_000 }));
      const put = await setPassword(raw, victim, 'attacker chose this');
      assert.equal(put.status, 401, put.text);
      assert.equal(put.json.error?.code, 'Authentication failed');
      assert.match(put.headers.get('www-authenticate') ?? '', /^Bearer realm="gatehouse identity API", error="invalid_token", error_description="The access token was issued to a client that may not call the identity API\."/);
      assert.equal(await victimPasswordIs(VICTIM_PASSWORD), true, "the victim's password is unchanged");
    });

    test('a client whose aud names the API gets the API audience and can use the identity API', async () => {
      const { client, clientSecret } = await createTestClient(server.gatehouse.store, { metadata: { aud: [api.clientId] } });
      const body = await tokens(client, clientSecret, `openid ${api.clientId} offline_access`);
      assert.equal(body.scope, `openid ${api.clientId}`);
      const target = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const put = await setPassword(body.access_token as string, target, 'a new password set by an admin');
      assert.equal(put.status, 200, put.text);
      assert.equal(await verifyPassword((await server.gatehouse.store.users.getCredentials(target.username))!.passwordHash, 'a new password set by an admin'), true);
    });

    test('aud naming other clients, or an inactive or deleted audience: invalid_scope; unknown values are still dropped', async () => {
      const store = server.gatehouse.store;
      const { client: otherApi } = await createTestClient(store, { grantTypes: [], redirectUris: [] });
      const { client: inactive } = await createTestClient(store, { grantTypes: [], redirectUris: [], active: false });
      const { client: gone } = await createTestClient(store, { grantTypes: [], redirectUris: [] });
      const { client, clientSecret } = await createTestClient(store, { metadata: { aud: [otherApi.clientId, inactive.clientId, gone.clientId] } });
      await store.clients.delete(gone.clientId);
      const refused = async (scope: string, description: string) => {
        const params = assertErrorRedirect(await silentAuthorization(client, scope), { redirectUri: RP_REDIRECT_URI, error: 'invalid_scope', state: 'st', issuer: server.issuer });
        assert.equal(params.get('error_description'), description);
      };
      await refused(`openid ${api.clientId}`, `The scope value ${api.clientId} is a client_id this client may not request as an audience (client metadata aud).`);
      await refused(`openid ${client.clientId}`, `The scope value ${client.clientId} is a client_id this client may not request as an audience (client metadata aud).`);
      await refused(`openid ${inactive.clientId}`, `The audience ${inactive.clientId} is not an active client.`);
      await refused(`openid ${gone.clientId}`, `The audience ${gone.clientId} is not an active client.`);
      // Scope-token characters (RFC 6749 §3.3) within 255 of them are each looked up as a client_id,
      // by equality, so SQL or LIKE wildcards find nothing; the 300-character value is not looked up.
      const hostile = ["x'OR'1'='1", "'--", '%', 'client-%', '_____'];
      assert.equal((await tokens(client, clientSecret, `openid ${otherApi.clientId} no-such-client ${hostile.join(' ')} ${'x'.repeat(300)} offline_access`)).scope, `openid ${otherApi.clientId}`);
    });

    test('a registered scope limits the other values; aud alone governs audiences', async () => {
      const { client, clientSecret } = await createTestClient(server.gatehouse.store, { scope: 'openid profile', metadata: { aud: [api.clientId] } });
      assert.equal((await tokens(client, clientSecret, `openid email ${api.clientId} profile`)).scope, `openid ${api.clientId} profile`);
    });

    test('a code issued while aud allowed the API and redeemed after it no longer does: invalid_scope, no token', async () => {
      const { client, clientSecret } = await createTestClient(server.gatehouse.store, { metadata: { aud: [api.clientId] } });
      const out: { verifier?: string } = {};
      const code = assertCodeRedirect(await silentAuthorization(client, `openid ${api.clientId}`, out), { redirectUri: RP_REDIRECT_URI, state: 'st', issuer: server.issuer });
      await updateClient(registrationDeps(), client.clientId, { aud: null });
      audit.clear();
      const response = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: RP_REDIRECT_URI, code_verifier: out.verifier! }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(response.status, 400);
      assert.deepEqual(response.body, { error: 'invalid_scope', error_description: `The client may no longer request the audience ${api.clientId} (client metadata aud).` });
      assert.deepEqual(audit.of('token.issued'), []);
    });

    test('removing the API from aud cuts off the tokens the client holds, and a refresh that keeps the audience is invalid_scope', async () => {
      const { client, clientSecret } = await createTestClient(server.gatehouse.store, { refreshTokens: true, rotateRefreshTokens: true, metadata: { aud: [api.clientId] } });
      const body = await tokens(client, clientSecret, `openid ${api.clientId}`);
      const target = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      assert.equal((await setPassword(body.access_token as string, target, 'first new password')).status, 200);
      await updateClient(registrationDeps(), client.clientId, { aud: null });
      const put = await setPassword(body.access_token as string, target, 'second new password');
      assert.equal(put.status, 401, put.text);
      assert.equal(await verifyPassword((await server.gatehouse.store.users.getCredentials(target.username))!.passwordHash, 'first new password'), true);
      const refresh = (scope?: string) =>
        postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: body.refresh_token as string, ...(scope === undefined ? {} : { scope }) }, { authorization: basic(client.clientId, clientSecret) });
      const widened = await refresh();
      assert.equal(widened.status, 400);
      assert.deepEqual(widened.body, { error: 'invalid_scope', error_description: `The client may no longer request the audience ${api.clientId} (client metadata aud).` });
      // The refused refresh did not spend the (rotating) refresh token: a narrower scope still works.
      const narrowed = await refresh('openid');
      assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
      assert.equal(narrowed.body.scope, 'openid');
    });
  });
}
