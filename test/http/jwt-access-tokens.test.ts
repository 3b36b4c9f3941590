/**
 * JWT access tokens (RFC 9068) over HTTP against a real server, on every database: which tokens
 * are JWTs (a resource server's `access_token_format`, GATEHOUSE_ACCESS_TOKEN_FORMAT), the header
 * and every claim, verified with jose against the published JWKS and with oauth4webapi's RFC 9068
 * §4 validation (openid-client's layer beneath), and what introspection, UserInfo, revocation and
 * the identity API do with them: a JWT is stored like an opaque token, by its hash.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK, type JWTPayload } from 'jose';
import * as oauth from 'oauth4webapi';
import type { Client } from '../../src/domain/client.ts';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import type { User } from '../../src/domain/user.ts';
import { addMember, createGroup } from '../../src/identity/groups.ts';
import { ManualClock, toNumericDate } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { addClient, addUser, basic, mintCode, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { call } from './identity-api/helpers.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const JWT_TTL = 300;
const API_GROUP = 'Identity API Users';

interface Party {
  client: Client;
  secret: string;
}

for (const db of DATABASES) {
  describe(`JWT access tokens (RFC 9068) on ${db.name}`, () => {
    let server: RunningServer;
    let clock: ManualClock;
    let discovery: Record<string, string>;
    let jwks: { keys: JWK[] };
    /** A resource server that asked for JWT access tokens (RS256 by default); also the identity API. */
    let rs: Party;
    /** One that asked for JWTs signed with ES256. */
    let rsEs: Party;
    /** One that asked for opaque tokens. */
    let rsOpaque: Party;
    /** One that registered nothing: the global default decides. */
    let rsPlain: Party;
    /** The client that obtains the tokens: every resource server above is in its `aud`. */
    let app: Party;
    let user: User;

    before(async () => {
      clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000);
      const apiClientId = `api-${randomUUID()}`;
      server = await startServer(db, { clock, env: { GATEHOUSE_API_CLIENT_ID: apiClientId } });
      const store = server.gatehouse.store;
      const resource = (clientId: string, metadata: Record<string, unknown>) => addClient(store, { clientId, grantTypes: [], redirectUris: [], refreshTokens: false, metadata });
      rs = await resource(apiClientId, { access_token_format: 'jwt' });
      rsEs = await resource(`rs-es-${randomUUID()}`, { access_token_format: 'jwt', access_token_signed_response_alg: 'ES256' });
      rsOpaque = await resource(`rs-opaque-${randomUUID()}`, { access_token_format: 'opaque' });
      rsPlain = await resource(`rs-plain-${randomUUID()}`, {});
      app = await addClient(store, {
        grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
        refreshTokens: true,
        rotateRefreshTokens: true,
        metadata: { aud: [rs.client.clientId, rsEs.client.clientId, rsOpaque.client.clientId, rsPlain.client.clientId] },
      });
      user = await addUser(store);
      await createGroup({ ...store, clock, random: cryptoRandom }, { name: API_GROUP }, AS_OPERATOR);
      await addMember(store, API_GROUP, user.id, AS_OPERATOR);
      discovery = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;
      jwks = (await (await fetch(discovery.jwks_uri!)).json()) as { keys: JWK[] };
    });
    after(async () => server.close());

    /** The token response of a code (as the authorization endpoint issues it) for `scope`. */
    async function codeTokens(scope: string, acr: string | undefined = 'urn:example:loa:2'): Promise<Record<string, unknown>> {
      const { code, row } = await mintCode(server.gatehouse.store, app.client, user, { scope, acr, amr: ['pwd'], now: clock.now() });
      const response = await postForm(discovery.token_endpoint!, { grant_type: 'authorization_code', code, redirect_uri: row.redirectUri }, { authorization: basic(app.client.clientId, app.secret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body;
    }

    async function verify(token: string, audience: string): Promise<{ header: Record<string, unknown>; payload: JWTPayload }> {
      const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: server.issuer, audience, typ: 'at+jwt', currentDate: new Date(clock.now()) });
      return { header: protectedHeader as Record<string, unknown>, payload };
    }

    const kidOf = (alg: string) => {
      const keys = jwks.keys.filter((key) => key.alg === alg);
      return (token: string) => {
        const { kid } = decodeProtectedHeader(token);
        assert.ok(keys.some((key) => key.kid === kid), `kid ${kid} is a published ${alg} key`);
        return kid;
      };
    };

    async function introspect(token: string, by: Party = rs): Promise<Record<string, unknown>> {
      const response = await postForm(discovery.introspection_endpoint!, { token }, { authorization: basic(by.client.clientId, by.secret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body;
    }

    const isOpaque = (token: unknown) => typeof token === 'string' && /^[A-Za-z0-9_-]{43}$/.test(token);

    test('a code for a resource server that asked for JWTs gives an at+jwt access token: header and every claim (RFC 9068 §2)', async () => {
      const scope = `openid profile ${rs.client.clientId}`;
      const body = await codeTokens(scope);
      const token = body.access_token as string;
      assert.equal(body.expires_in, JWT_TTL);
      const { header, payload } = await verify(token, rs.client.clientId);
      assert.deepEqual(header, { alg: 'RS256', kid: kidOf('RS256')(token), typ: 'at+jwt' });
      const iat = toNumericDate(clock.now());
      assert.match(String(payload.jti), /^[A-Za-z0-9_-]{22}$/);
      assert.deepEqual(payload, {
        iss: server.issuer,
        exp: iat + JWT_TTL,
        aud: rs.client.clientId,
        sub: user.id,
        client_id: app.client.clientId,
        iat,
        jti: payload.jti,
        scope,
        auth_time: iat - 5,
        amr: ['pwd'],
        acr: 'urn:example:loa:2',
      });
      // A refresh token and an ID token come with it as ever; at_hash is over the JWT.
      assert.ok(isOpaque(body.refresh_token));
      assert.equal(typeof body.id_token, 'string');
    });

    test("the client's authorization policy puts its access_token claims, and only those, in the JWT (issue 13: a policy's claims in `in: access_token`)", async () => {
      const store = server.gatehouse.store;
      const policyName = `jwt-claims-${randomUUID()}`;
      await store.policies.insert({
        document: parsePolicyDocument({
          name: policyName,
          claims: [
            { claim: 'tenant', value: 'acme', in: ['access_token'] },
            { claim: 'mail', from: 'user.email', in: ['access_token'], scope: 'email' },
            { claim: 'not_in_jwt', value: 'x', in: ['userinfo'] },
          ],
        }),
        version: 1,
        createdAt: 0,
        updatedAt: 0,
      });
      const withPolicy = await addClient(store, { grantTypes: ['authorization_code'], metadata: { aud: [rs.client.clientId] }, authorizationPolicy: policyName });
      const tokenFor = async (scope: string) => {
        const { code, row } = await mintCode(store, withPolicy.client, user, { scope, amr: ['pwd'], now: clock.now() });
        const response = await postForm(discovery.token_endpoint!, { grant_type: 'authorization_code', code, redirect_uri: row.redirectUri }, { authorization: basic(withPolicy.client.clientId, withPolicy.secret) });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        return (await verify(response.body.access_token as string, rs.client.clientId)).payload;
      };
      const iat = toNumericDate(clock.now());
      const base = { iss: server.issuer, exp: iat + JWT_TTL, aud: rs.client.clientId, sub: user.id, client_id: withPolicy.client.clientId, iat, auth_time: iat - 5, amr: ['pwd'] };
      const plain = await tokenFor(`openid ${rs.client.clientId}`);
      assert.deepEqual(plain, { ...base, jti: plain.jti, scope: `openid ${rs.client.clientId}`, tenant: 'acme' });
      const withEmail = await tokenFor(`openid email ${rs.client.clientId}`);
      assert.deepEqual(withEmail, { ...base, jti: withEmail.jti, scope: `openid email ${rs.client.clientId}`, tenant: 'acme', mail: user.email });
    });

    test('oauth4webapi validates the token as a resource server does (RFC 9068 §4), against the discovery jwks_uri', async () => {
      const body = await codeTokens(`openid ${rs.client.clientId}`);
      const as = { issuer: server.issuer, jwks_uri: discovery.jwks_uri! } satisfies oauth.AuthorizationServer;
      const request = new Request('https://rs.example.test/data', { headers: { authorization: `Bearer ${body.access_token as string}` } });
      const claims = await oauth.validateJwtAccessToken(as, request, rs.client.clientId, { [oauth.allowInsecureRequests]: true });
      assert.equal(claims.sub, user.id);
      assert.equal(claims.client_id, app.client.clientId);
      // The same validation refuses it for another audience.
      const other = new Request('https://rs.example.test/data', { headers: { authorization: `Bearer ${body.access_token as string}` } });
      await assert.rejects(oauth.validateJwtAccessToken(as, other, rsEs.client.clientId, { [oauth.allowInsecureRequests]: true }), /unexpected JWT "aud"/);
    });

    test('introspection answers active for a JWT access token, inactive once it is revoked (RFC 7662, RFC 7009); UserInfo likewise', async () => {
      const body = await codeTokens(`openid profile ${rs.client.clientId}`);
      const token = body.access_token as string;
      const iat = toNumericDate(clock.now());
      const active = await introspect(token);
      const { session_index: sessionIndex } = active;
      assert.match(String(sessionIndex), /^_[0-9a-f]{40}$/);
      assert.deepEqual(active, {
        active: true,
        sub: user.id,
        iss: server.issuer,
        aud: rs.client.clientId,
        exp: iat + JWT_TTL,
        iat,
        auth_time: iat - 5,
        amr: ['pwd'],
        session_index: sessionIndex,
        acr: 'urn:example:loa:2',
        name: 'Ada Lovelace',
        given_name: 'Ada',
        family_name: 'Lovelace',
        preferred_username: user.username,
        updated_at: toNumericDate(user.updatedAt),
        scope: `openid profile ${rs.client.clientId}`,
        client_id: app.client.clientId,
        token_type: 'access_token',
        token_audiences: [rs.client.clientId],
      });
      const info = await fetch(discovery.userinfo_endpoint!, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(info.status, 200);
      assert.equal(((await info.json()) as Record<string, unknown>).sub, user.id);

      const revoked = await postForm(discovery.revocation_endpoint!, { token }, { authorization: basic(app.client.clientId, app.secret) });
      assert.equal(revoked.status, 200);
      assert.deepEqual(await introspect(token), { active: false });
      const after = await fetch(discovery.userinfo_endpoint!, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(after.status, 401);
      assert.match(after.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    });

    test('a replayed code revokes the JWT access token issued from it: introspection answers inactive (RFC 9700 §4.2.4)', async () => {
      const { code, row } = await mintCode(server.gatehouse.store, app.client, user, { scope: `openid ${rs.client.clientId}`, now: clock.now() });
      const redeem = () => postForm(discovery.token_endpoint!, { grant_type: 'authorization_code', code, redirect_uri: row.redirectUri }, { authorization: basic(app.client.clientId, app.secret) });
      const first = await redeem();
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const token = first.body.access_token as string;
      assert.equal((await introspect(token)).active, true);
      const replay = await redeem();
      assert.deepEqual([replay.status, replay.body.error], [400, 'invalid_grant']);
      assert.deepEqual(await introspect(token), { active: false });
    });

    test('an expired JWT access token is inactive at introspection once its exp has passed', async () => {
      const body = await codeTokens(`openid ${rs.client.clientId}`);
      const token = body.access_token as string;
      assert.equal((await introspect(token)).active, true);
      clock.advance(JWT_TTL * 1000);
      try {
        assert.deepEqual(await introspect(token), { active: false });
      } finally {
        clock.advance(-JWT_TTL * 1000);
      }
    });

    test('the identity API, registered for JWTs, accepts one as a bearer token and refuses it once revoked', async () => {
      const body = await codeTokens(`openid ${rs.client.clientId}`);
      const token = body.access_token as string;
      const me = await call(server, 'GET', `/2.0/users/${user.id}`, { authorization: `Bearer ${token}` });
      assert.equal(me.status, 200, me.text);
      await postForm(discovery.revocation_endpoint!, { token }, { authorization: basic(app.client.clientId, app.secret) });
      const refused = await call(server, 'GET', `/2.0/users/${user.id}`, { authorization: `Bearer ${token}` });
      assert.equal(refused.status, 401, refused.text);
    });

    test('a refresh gives a new JWT access token with a new jti and the same claims otherwise', async () => {
      const scope = `openid ${rs.client.clientId}`;
      const first = await codeTokens(scope);
      const before = (await verify(first.access_token as string, rs.client.clientId)).payload;
      clock.advance(10_000);
      const response = await postForm(discovery.token_endpoint!, { grant_type: 'refresh_token', refresh_token: first.refresh_token as string }, { authorization: basic(app.client.clientId, app.secret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const { header, payload } = await verify(response.body.access_token as string, rs.client.clientId);
      assert.equal(header.typ, 'at+jwt');
      assert.notEqual(payload.jti, before.jti);
      assert.deepEqual(payload, { ...before, iat: before.iat! + 10, exp: before.exp! + 10, jti: payload.jti });
      assert.equal(response.body.expires_in, JWT_TTL);
    });

    test('the password grant gives a JWT access token for a JWT resource server, as every grant that issues access tokens', async () => {
      const store = server.gatehouse.store;
      const migrating = await addClient(store, { grantTypes: ['password'], refreshTokens: false, metadata: { aud: [rs.client.clientId] } });
      const owner = await createTestUser(store, { password: 'correct horse battery' });
      const response = await postForm(discovery.token_endpoint!, { grant_type: 'password', username: owner.username, password: 'correct horse battery', scope: `openid ${rs.client.clientId}` }, { authorization: basic(migrating.client.clientId, migrating.secret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const { payload } = await verify(response.body.access_token as string, rs.client.clientId);
      const iat = toNumericDate(clock.now());
      assert.deepEqual(payload, { iss: server.issuer, exp: iat + JWT_TTL, aud: rs.client.clientId, sub: owner.id, client_id: migrating.client.clientId, iat, jti: payload.jti, scope: `openid ${rs.client.clientId}`, auth_time: iat, amr: ['pwd'] });
    });

    test('client_credentials for a JWT resource server: sub is the client_id, no user claims (RFC 9068 §2.2)', async () => {
      const response = await postForm(discovery.token_endpoint!, { grant_type: 'client_credentials', scope: rs.client.clientId }, { authorization: basic(app.client.clientId, app.secret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const token = response.body.access_token as string;
      const { header, payload } = await verify(token, rs.client.clientId);
      const iat = toNumericDate(clock.now());
      assert.deepEqual(header, { alg: 'RS256', kid: kidOf('RS256')(token), typ: 'at+jwt' });
      assert.deepEqual(payload, { iss: server.issuer, exp: iat + JWT_TTL, aud: rs.client.clientId, sub: app.client.clientId, client_id: app.client.clientId, iat, jti: payload.jti, scope: rs.client.clientId });
      assert.equal((await introspect(token)).sub, app.client.clientId);
    });

    test('the algorithm is the resource server\'s access_token_signed_response_alg (ES256)', async () => {
      const body = await codeTokens(`openid ${rsEs.client.clientId}`);
      const token = body.access_token as string;
      const { header, payload } = await verify(token, rsEs.client.clientId);
      assert.deepEqual(header, { alg: 'ES256', kid: kidOf('ES256')(token), typ: 'at+jwt' });
      assert.equal(payload.aud, rsEs.client.clientId);
    });

    test('several audiences: any JWT one makes a JWT, aud lists them all, the first JWT audience\'s algorithm signs', async () => {
      const scope = `openid ${rsOpaque.client.clientId} ${rsEs.client.clientId} ${rs.client.clientId}`;
      const body = await codeTokens(scope);
      const { header, payload } = await verify(body.access_token as string, rsOpaque.client.clientId);
      assert.equal(header.alg, 'ES256');
      assert.deepEqual(payload.aud, [rsOpaque.client.clientId, rsEs.client.clientId, rs.client.clientId]);
    });

    test('opaque where no audience asked for a JWT: an explicit opaque, none registered, or no audience (default opaque)', async () => {
      for (const scope of [`openid ${rsOpaque.client.clientId}`, `openid ${rsPlain.client.clientId}`, 'openid profile', `openid ${rsOpaque.client.clientId} ${rsPlain.client.clientId}`]) {
        const body = await codeTokens(scope);
        assert.ok(isOpaque(body.access_token), `${scope}: ${String(body.access_token)}`);
        assert.equal(body.expires_in, 3600, scope);
      }
    });

    test('over-long tokens are clean errors: UserInfo invalid_token, introspection and revocation invalid_request; a long unknown one is inactive', async () => {
      const tooLong = 'a'.repeat(8193);
      const info = await fetch(discovery.userinfo_endpoint!, { headers: { authorization: `Bearer ${tooLong}` } });
      assert.equal(info.status, 401);
      assert.match(info.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      const introspected = await postForm(discovery.introspection_endpoint!, { token: tooLong }, { authorization: basic(rs.client.clientId, rs.secret) });
      assert.equal(introspected.status, 400);
      assert.equal(introspected.body.error, 'invalid_request');
      const revoked = await postForm(discovery.revocation_endpoint!, { token: tooLong }, { authorization: basic(app.client.clientId, app.secret) });
      assert.equal(revoked.status, 400);
      assert.equal(revoked.body.error, 'invalid_request');
      const api = await call(server, 'GET', `/2.0/users/${user.id}`, { authorization: `Bearer ${tooLong}` });
      assert.equal(api.status, 401);
      assert.deepEqual(await introspect('a'.repeat(8192)), { active: false });
    });
  });

  describe(`GATEHOUSE_ACCESS_TOKEN_FORMAT=jwt on ${db.name}`, () => {
    let server: RunningServer;
    let app: Party;
    let rsOpaque: Party;
    let rsPlain: Party;
    let user: User;
    let jwks: { keys: JWK[] };

    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_ACCESS_TOKEN_FORMAT: 'jwt', GATEHOUSE_JWT_ACCESS_TOKEN_TTL: '120' } });
      const store = server.gatehouse.store;
      rsOpaque = await addClient(store, { clientId: `rs-opaque-${randomUUID()}`, grantTypes: [], redirectUris: [], refreshTokens: false, metadata: { access_token_format: 'opaque' } });
      rsPlain = await addClient(store, { clientId: `rs-plain-${randomUUID()}`, grantTypes: [], redirectUris: [], refreshTokens: false, metadata: { access_token_signed_response_alg: 'EdDSA' } });
      app = await addClient(store, { refreshTokens: false, accessTokenTtl: 60, metadata: { aud: [rsOpaque.client.clientId, rsPlain.client.clientId] } });
      user = await addUser(store);
      jwks = (await (await fetch(`${server.issuer}/oauth2/metadata.jwks`)).json()) as { keys: JWK[] };
    });
    after(async () => server.close());

    async function accessToken(scope: string): Promise<{ token: string; expiresIn: unknown }> {
      const { code, row } = await mintCode(server.gatehouse.store, app.client, user, { scope });
      const response = await postForm(`${server.issuer}/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: row.redirectUri }, { authorization: basic(app.client.clientId, app.secret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return { token: response.body.access_token as string, expiresIn: response.body.expires_in };
    }

    test('no audience: a JWT whose aud is the issuer (for its UserInfo endpoint), RS256, living the client\'s shorter access_token_ttl', async () => {
      const { token, expiresIn } = await accessToken('openid');
      const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: server.issuer, audience: server.issuer, typ: 'at+jwt' });
      assert.equal(protectedHeader.alg, 'RS256');
      assert.equal(expiresIn, 60);
      assert.equal(payload.exp! - payload.iat!, 60);
      assert.equal((await fetch(`${server.issuer}/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    });

    test('an audience that registered no format gets a JWT in its registered algorithm; one that registered opaque gets opaque', async () => {
      const { token } = await accessToken(`openid ${rsPlain.client.clientId}`);
      const { protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: server.issuer, audience: rsPlain.client.clientId, typ: 'at+jwt' });
      assert.equal(protectedHeader.alg, 'EdDSA');
      const opaque = await accessToken(`openid ${rsOpaque.client.clientId}`);
      assert.match(opaque.token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(opaque.expiresIn, 60);
    });
  });
}
