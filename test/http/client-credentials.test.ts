/**
 * The client_credentials grant (RFC 6749 §4.4) over HTTP against a real server, on every database:
 * the happy path with openid-client v6 as the client, the refusals with plain requests, and what
 * each token reader (introspection, userinfo, revocation, the identity API, audit) does with a
 * token whose subject is the client itself. Clients are registered through the same use case as
 * the CLI (registerClient), so registration's rules are part of the path.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { systemClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient, setClientActive, updateClient } from '../../src/oauth/client-registration.ts';
import { fingerprint } from '../../src/observability/audit.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { addClient, basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { aClientToken } from '../helpers/store.ts';
import { call } from './identity-api/helpers.ts';

/** An audit event without pino's own fields (level, time, pid, hostname, msg). */
function event(line: object | undefined): Record<string, unknown> | undefined {
  if (line === undefined) return undefined;
  const { level: _level, time: _time, pid: _pid, hostname: _hostname, msg: _msg, ...rest } = line as Record<string, unknown>;
  return rest;
}

for (const db of DATABASES) {
  describe(`client_credentials grant on ${db.name}`, () => {
    let server: RunningServer;
    let audit: AuditCapture;
    let apiClientId: string;
    /** A resource server that introspects tokens. */
    let resource: { clientId: string; secret: string };

    before(async () => {
      audit = new AuditCapture();
      apiClientId = `identity-api-${randomUUID()}`;
      server = await startServer(db, { audit, env: { GATEHOUSE_API_CLIENT_ID: apiClientId } });
      // The API stands for a registered client whose client_id is the configured one.
      await addClient(server.gatehouse.store, { clientId: apiClientId, name: 'Identity API', grantTypes: [], redirectUris: [], refreshTokens: false, metadata: { resource_server: true } });
      const rs = await registerClient(deps(), { client_name: 'Resource server', grant_types: [] });
      resource = { clientId: rs.client.clientId, secret: rs.clientSecret! };
    });
    after(async () => server.close());

    const deps = () => ({ clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom });
    const tokenUrl = () => `${server.url}/uas/oauth2/token`;
    /** A machine client registered for client_credentials alone (no redirect URI), its `aud` allowing the API. */
    const machine = async (metadata: Record<string, unknown> = {}) => {
      const { client, clientSecret } = await registerClient(deps(), { client_name: 'Nightly sync', grant_types: ['client_credentials'], aud: [apiClientId], ...metadata });
      return { clientId: client.clientId, secret: clientSecret! };
    };
    const configure = (clientId: string, secret: string) =>
      // allowInsecureRequests: the test issuer is http on loopback; production issuers are https.
      oidc.discovery(new URL(server.issuer), clientId, secret, oidc.ClientSecretBasic(secret), { execute: [oidc.allowInsecureRequests] });
    const introspect = async (token: string) => (await postForm(`${server.url}/uas/oauth2/introspection`, { token }, { authorization: basic(resource.clientId, resource.secret) })).body;
    const apiWith = (token: string) => call(server, 'GET', '/2.0/users/', { authorization: `Bearer ${token}` });

    test('openid-client gets an access token for the API: no refresh token, no ID token; introspection says sub = client_id and no user claim (CC-01, CC-04, CC-05)', async () => {
      const { clientId, secret } = await machine();
      const config = await configure(clientId, secret);
      assert.ok(config.serverMetadata().grant_types_supported?.includes('client_credentials'));
      audit.clear();
      const before = Math.floor(Date.now() / 1000);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: apiClientId });
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.scope, apiClientId);
      assert.equal(tokens.refresh_token, undefined, 'RFC 6749 §4.4.3: no refresh token');
      assert.equal(tokens.id_token, undefined, 'no End-User, no ID token');
      assert.equal(tokens.expires_in, server.config.accessTokenTtl);

      const introspection = await oidc.tokenIntrospection(await configure(resource.clientId, resource.secret), tokens.access_token);
      const { exp, iat, ...rest } = introspection;
      assert.deepEqual(rest, { active: true, sub: clientId, iss: server.issuer, aud: resource.clientId, scope: apiClientId, client_id: clientId, token_type: 'access_token', token_audiences: [apiClientId] });
      assert.ok(typeof iat === 'number' && iat >= before && iat <= before + 5);
      assert.equal(exp, iat + server.config.accessTokenTtl);

      assert.deepEqual(audit.of('token.issued').map(event), [
        { audit: true, event: 'token.issued', grantType: 'client_credentials', clientId, scope: apiClientId, family: fingerprint(tokens.access_token), accessToken: fingerprint(tokens.access_token), idToken: false, ip: '127.0.0.1' },
      ]);
    });

    test('openid in the scope is ignored: the response scope says what was granted, and there is no ID token (CC-06)', async () => {
      const { clientId, secret } = await machine();
      const tokens = await oidc.clientCredentialsGrant(await configure(clientId, secret), { scope: `openid ${apiClientId}` });
      assert.equal(tokens.scope, apiClientId);
      assert.equal(tokens.id_token, undefined);
      const withoutScope = await postForm(tokenUrl(), { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) });
      assert.equal(withoutScope.status, 200);
      assert.deepEqual(Object.keys(withoutScope.body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
      assert.equal(withoutScope.body.scope, '', 'no scope asked: a token that names only its client');
      const onlyOpenid = await postForm(tokenUrl(), { grant_type: 'client_credentials', scope: 'openid' }, { authorization: basic(clientId, secret) });
      assert.deepEqual([onlyOpenid.status, onlyOpenid.body.scope, onlyOpenid.body.id_token], [200, '', undefined]);
    });

    test('scope outside what the client may get is invalid_scope: another client_id, a user-claim scope, an unknown or malformed value (CC-03)', async () => {
      const { clientId, secret } = await machine();
      const other = await addClient(server.gatehouse.store);
      for (const scope of [other.client.clientId, `${apiClientId} ${other.client.clientId}`, 'profile', 'email', `openid ${apiClientId} profile`, 'no-such-scope', 'bad"value']) {
        const response = await postForm(tokenUrl(), { grant_type: 'client_credentials', scope }, { authorization: basic(clientId, secret) });
        assert.deepEqual([response.status, response.body.error], [400, 'invalid_scope'], scope);
      }
      // A client with no `aud` may get no audience at all.
      const noAud = await machine({ aud: undefined });
      const refused = await postForm(tokenUrl(), { grant_type: 'client_credentials', scope: apiClientId }, { authorization: basic(noAud.clientId, noAud.secret) });
      assert.deepEqual([refused.status, refused.body.error], [400, 'invalid_scope']);
      assert.deepEqual(audit.of('token.issued').filter((e) => e.clientId === clientId || e.clientId === noAud.clientId), []);
    });

    test('a client not registered for the grant, or a public client, is unauthorized_client; bad credentials are invalid_client (CC-02)', async () => {
      const web = await registerClient(deps(), { client_name: 'Web app', redirect_uris: ['https://rp.example.com/cb'] });
      const notRegistered = await postForm(tokenUrl(), { grant_type: 'client_credentials' }, { authorization: basic(web.client.clientId, web.clientSecret!) });
      assert.deepEqual([notRegistered.status, notRegistered.body.error], [400, 'unauthorized_client']);
      // Registration refuses a public client with the grant; a row stored otherwise is refused at the token endpoint.
      const { client: publicClient } = await addClient(server.gatehouse.store, { tokenEndpointAuthMethod: 'none', secretHash: undefined, grantTypes: ['client_credentials'], redirectUris: [] });
      const asPublic = await postForm(tokenUrl(), { grant_type: 'client_credentials', client_id: publicClient.clientId });
      assert.deepEqual([asPublic.status, asPublic.body.error, asPublic.body.error_description], [400, 'unauthorized_client', 'The client_credentials grant is for confidential clients only.']);
      const { clientId } = await machine();
      const wrongSecret = await postForm(tokenUrl(), { grant_type: 'client_credentials' }, { authorization: basic(clientId, 'not the secret') });
      assert.deepEqual([wrongSecret.status, wrongSecret.body.error], [401, 'invalid_client']);
      const repeated = await fetch(tokenUrl(), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(clientId, 'x') }, body: 'grant_type=client_credentials&scope=a&scope=b' });
      assert.deepEqual([repeated.status, ((await repeated.json()) as { error: string }).error], [400, 'invalid_request']);
    });

    test('userinfo refuses a client token with 401 invalid_token: it has no user (CC-07)', async () => {
      const { clientId, secret } = await machine();
      const tokens = await oidc.clientCredentialsGrant(await configure(clientId, secret), { scope: `openid ${apiClientId}` });
      for (const method of ['GET', 'POST'] as const) {
        const response = await fetch(`${server.url}/uas/oauth2/userinfo`, { method, headers: { authorization: `Bearer ${tokens.access_token}` } });
        assert.equal(response.status, 401, method);
        assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer .*error="invalid_token", error_description="The access token has no user: it was issued to a client for itself\."/, method);
      }
    });

    test('revocation by its client ends the token everywhere: introspection, the identity API (CC-08)', async () => {
      const { clientId, secret } = await machine();
      const config = await configure(clientId, secret);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: apiClientId });
      assert.equal((await apiWith(tokens.access_token)).status, 200);
      audit.clear();
      await oidc.tokenRevocation(config, tokens.access_token);
      assert.deepEqual(await introspect(tokens.access_token), { active: false });
      assert.equal((await apiWith(tokens.access_token)).status, 401);
      const [revoked] = audit.of('token.revoked');
      assert.deepEqual(event(revoked), { audit: true, event: 'token.revoked', clientId, kind: 'access_token', token: fingerprint(tokens.access_token), family: fingerprint(tokens.access_token), revoked: 1, ip: '127.0.0.1' });
      // Another client cannot revoke it (RFC 7009 §2.1): the answer is 200 and nothing changes.
      const second = await oidc.clientCredentialsGrant(config, { scope: apiClientId });
      const stranger = await machine();
      const answer = await postForm(`${server.url}/uas/oauth2/revocation`, { token: second.access_token }, { authorization: basic(stranger.clientId, stranger.secret) });
      assert.equal(answer.status, 200);
      assert.equal((await introspect(second.access_token)).active, true);
    });

    test('the identity API accepts a client token for the API while the client\'s aud allows it, and acts as the client; without the audience it is refused (CC-10)', async () => {
      const { clientId, secret } = await machine();
      const { access_token: token } = await oidc.clientCredentialsGrant(await configure(clientId, secret), { scope: apiClientId });
      const allowed = await apiWith(token);
      assert.equal(allowed.status, 200, allowed.text);
      // It may change what the API offers; the audit log names the client as the actor, and no user.
      audit.clear();
      const created = await call(server, 'POST', '/2.0/users/', { authorization: `Bearer ${token}`, contentType: 'application/json', body: JSON.stringify({ attributes: { login: `cc-${randomUUID()}` } }) });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(audit.all().filter((e) => e.event === 'user.created').map((e) => (e as { actor?: unknown }).actor), [{ via: 'identity-api', method: 'bearer', clientId }]);

      // A token without the API in its scope: 403 insufficient_scope, as for a user token.
      const { access_token: bare } = await oidc.clientCredentialsGrant(await configure(clientId, secret));
      const unscoped = await apiWith(bare);
      assert.equal(unscoped.status, 403);
      assert.match(unscoped.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);

      // A client whose aud does not list the API: its token (it can get one with no audience) is refused.
      const outsider = await machine({ aud: undefined });
      const { access_token: outsiderToken } = await oidc.clientCredentialsGrant(await configure(outsider.clientId, outsider.secret));
      const refused = await apiWith(outsiderToken);
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token", error_description="The access token was issued to a client that may not call the identity API\."/);

      // Taking the API out of the client's aud cuts off the token it already holds, at once.
      await updateClient(deps(), clientId, { aud: null });
      assert.equal((await apiWith(token)).status, 401);
    });

    test('a client token dies with its client: deactivation makes it inactive at introspection and the identity API (CC-11)', async () => {
      const { clientId, secret } = await machine();
      const { access_token: token } = await oidc.clientCredentialsGrant(await configure(clientId, secret), { scope: apiClientId });
      assert.equal((await introspect(token)).active, true);
      await setClientActive(deps(), clientId, false);
      assert.deepEqual(await introspect(token), { active: false });
      assert.equal((await apiWith(token)).status, 401);
      const again = await postForm(tokenUrl(), { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) });
      assert.deepEqual([again.status, again.body.error], [401, 'invalid_client']);
    });

    test('a refresh token whose subject is a client (never issued; stored by hand) is refused as invalid_grant, and rotates nothing (CC-04)', async () => {
      const { client, secret } = await addClient(server.gatehouse.store, { grantTypes: ['client_credentials', 'refresh_token'], redirectUris: [], refreshTokens: true });
      const value = randomUUID() + randomUUID();
      const stored = aClientToken({ tokenHash: hashSecret(value), familyId: hashSecret(value), kind: 'refresh_token', clientId: client.clientId, expiresAt: Date.now() + 3_600_000 });
      await server.gatehouse.store.tokens.insert(stored);
      const response = await postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: value }, { authorization: basic(client.clientId, secret) });
      assert.deepEqual([response.status, response.body.error, response.body.error_description], [400, 'invalid_grant', 'The refresh token is invalid.']);
      assert.deepEqual(await server.gatehouse.store.tokens.find(stored.tokenHash), stored);
    });
  });
}
