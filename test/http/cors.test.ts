/**
 * CORS for browser single-page apps (src/http/plugins/cors.ts): per-client origins on the token,
 * revocation and UserInfo endpoints, `*` on discovery and the JWK Set, and nothing anywhere else.
 * Each rule on SQLite and PostgreSQL, under the default issuer path (/uas, Ubisecure's), under a
 * bare-host issuer and under /auth: the routes are mounted under the issuer's path.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { CORS_ORIGIN_SET_TTL_MS } from '../../src/http/plugins/cors.ts';
import { addClient, addUser, basic, mintCode, pkcePair, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const SPA = 'http://127.0.0.1:5173';
const OTHER_SPA = 'https://other-spa.example.test';
const LISTED = 'https://listed.example.test';
const STRANGER = 'https://stranger.example.test';
const INACTIVE = 'https://inactive.example.test';

/** Every CORS response header, for equality assertions. */
function corsHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => name.startsWith('access-control-')));
}

async function preflight(url: string, origin: string, method: string, requestHeaders?: string): Promise<Response> {
  const headers: Record<string, string> = { origin, 'access-control-request-method': method };
  if (requestHeaders) headers['access-control-request-headers'] = requestHeaders;
  return fetch(url, { method: 'OPTIONS', headers });
}

const ISSUERS = [
  { name: 'the default issuer (/uas)', env: {} as Record<string, string>, base: '/uas' },
  { name: 'a bare-host issuer', env: { GATEHOUSE_ISSUER: 'https://sso.example.com' } as Record<string, string>, base: '' },
  { name: 'an issuer at /auth', env: { GATEHOUSE_ISSUER: 'https://sso.example.com/auth' } as Record<string, string>, base: '/auth' },
];

for (const db of DATABASES) {
  for (const issuer of ISSUERS) {
    describe(`CORS under ${issuer.name} on ${db.name}`, () => {
      let server: RunningServer;
      let spa: Client;
      let other: Client;
      let listed: Client;
      const url = (path: string) => `${server.url}${issuer.base}${path}`;

      before(async () => {
        server = await startServer(db, { env: issuer.env });
        const store = server.gatehouse.store;
        // A public SPA (origin from its redirect URI), another SPA, a client listing its origins, an inactive one.
        ({ client: spa } = await addClient(store, { tokenEndpointAuthMethod: 'none', redirectUris: [`${SPA}/callback`, 'com.example.app:/cb'], postLogoutRedirectUris: [`${SPA}/`] }));
        ({ client: other } = await addClient(store, { tokenEndpointAuthMethod: 'none', redirectUris: [`${OTHER_SPA}/cb`] }));
        ({ client: listed } = await addClient(store, { redirectUris: ['https://server-side.example.test/cb'], metadata: { allowed_cors_origins: [LISTED] } }));
        await addClient(store, { tokenEndpointAuthMethod: 'none', redirectUris: [`${INACTIVE}/cb`], active: false });
      });
      after(async () => server.close());

      test('a preflight at the token and revocation endpoints from an origin of an active client: exactly POST, Authorization and Content-Type, max-age, Vary, no credentials (SP-01)', async () => {
        for (const path of ['/oauth2/token', '/oauth2/revocation']) {
          for (const origin of [SPA, OTHER_SPA, LISTED]) {
            const response = await preflight(url(path), origin, 'POST', 'content-type');
            assert.equal(response.status, 204, `${path} ${origin}`);
            assert.deepEqual(corsHeaders(response.headers), {
              'access-control-allow-origin': origin,
              'access-control-allow-methods': 'POST',
              'access-control-allow-headers': 'Authorization, Content-Type',
              'access-control-max-age': '600',
            });
            assert.equal(response.headers.get('vary'), 'Origin');
          }
        }
      });

      test('a preflight at UserInfo: exactly GET and POST with Authorization (SP-01)', async () => {
        const response = await preflight(url('/oauth2/userinfo'), SPA, 'GET', 'authorization');
        assert.equal(response.status, 204);
        assert.deepEqual(corsHeaders(response.headers), {
          'access-control-allow-origin': SPA,
          'access-control-allow-methods': 'GET, POST',
          'access-control-allow-headers': 'Authorization',
          'access-control-max-age': '600',
        });
      });

      test('a preflight from an origin no active client has, or for a method the endpoint does not take, gets no CORS headers (SP-02)', async () => {
        for (const path of ['/oauth2/token', '/oauth2/revocation', '/oauth2/userinfo']) {
          for (const origin of [STRANGER, INACTIVE, 'null', `${SPA}/`, 'http://127.0.0.1:5174']) {
            const response = await preflight(url(path), origin, 'POST');
            assert.deepEqual(corsHeaders(response.headers), {}, `${path} ${origin}`);
          }
          const wrongMethod = await preflight(url(path), SPA, 'DELETE');
          assert.deepEqual(corsHeaders(wrongMethod.headers), {}, `${path} DELETE`);
        }
      });

      test("the token answer is readable by the origins of the client that authenticated, not by another client's (SP-03)", async () => {
        const store = server.gatehouse.store;
        const user = await addUser(store);
        const redeem = async (origin: string) => {
          const { verifier, challenge } = pkcePair();
          const { code } = await mintCode(store, spa, user, { codeChallenge: challenge, codeChallengeMethod: 'S256' });
          return postForm(url('/oauth2/token'), { grant_type: 'authorization_code', code, redirect_uri: `${SPA}/callback`, client_id: spa.clientId, code_verifier: verifier }, { origin });
        };
        const own = await redeem(SPA);
        assert.equal(own.status, 200, JSON.stringify(own.body));
        assert.deepEqual(corsHeaders(own.headers), { 'access-control-allow-origin': SPA });
        assert.equal(own.headers.get('vary'), 'Origin');
        for (const origin of [OTHER_SPA, LISTED, STRANGER]) {
          const foreign = await redeem(origin);
          assert.equal(foreign.status, 200);
          assert.deepEqual(corsHeaders(foreign.headers), {}, origin);
        }
        const sameOrigin = await redeem('');
        assert.deepEqual(corsHeaders(sameOrigin.headers), {}, 'no Origin, no CORS');
      });

      test('allowed_cors_origins replaces the redirect URIs\' origins; a Basic-authenticated client is recognised (SP-04)', async () => {
        const { client, secret } = await addClient(server.gatehouse.store, { redirectUris: ['https://server-side.example.test/cb'], metadata: { allowed_cors_origins: [LISTED] } });
        const user = await addUser(server.gatehouse.store);
        for (const [origin, expected] of [
          [LISTED, { 'access-control-allow-origin': LISTED }],
          ['https://server-side.example.test', {}],
        ] as const) {
          const { code } = await mintCode(server.gatehouse.store, client, user);
          const response = await postForm(url('/oauth2/token'), { grant_type: 'authorization_code', code, redirect_uri: 'https://server-side.example.test/cb' }, { origin, authorization: basic(client.clientId, secret) });
          assert.equal(response.status, 200);
          assert.deepEqual(corsHeaders(response.headers), expected, origin);
        }
        assert.ok(listed.metadata.allowed_cors_origins);
      });

      test("an error naming the client is readable by its origins only; one naming no known client by any active client's origin (SP-05)", async () => {
        const namedSpa = await postForm(url('/oauth2/token'), { grant_type: 'refresh_token', refresh_token: 'nope', client_id: spa.clientId }, { origin: SPA });
        assert.equal(namedSpa.status, 400);
        assert.equal(namedSpa.body.error, 'invalid_grant');
        assert.deepEqual(corsHeaders(namedSpa.headers), { 'access-control-allow-origin': SPA });
        const namedFromOther = await postForm(url('/oauth2/token'), { grant_type: 'refresh_token', refresh_token: 'nope', client_id: spa.clientId }, { origin: OTHER_SPA });
        assert.deepEqual(corsHeaders(namedFromOther.headers), {});
        const unknownClient = await postForm(url('/oauth2/token'), { grant_type: 'refresh_token', refresh_token: 'nope', client_id: 'no-such-client' }, { origin: OTHER_SPA });
        assert.equal(unknownClient.status, 401);
        assert.deepEqual(corsHeaders(unknownClient.headers), { 'access-control-allow-origin': OTHER_SPA });
        const stranger = await postForm(url('/oauth2/token'), { grant_type: 'refresh_token', refresh_token: 'nope', client_id: 'no-such-client' }, { origin: STRANGER });
        assert.deepEqual(corsHeaders(stranger.headers), {});
      });

      test("UserInfo is readable by the origins of the token's client; an invalid token's error by any active client's origin (SP-06)", async () => {
        const store = server.gatehouse.store;
        const user = await addUser(store);
        const { verifier, challenge } = pkcePair();
        const { code } = await mintCode(store, spa, user, { codeChallenge: challenge, codeChallengeMethod: 'S256' });
        const tokens = await postForm(url('/oauth2/token'), { grant_type: 'authorization_code', code, redirect_uri: `${SPA}/callback`, client_id: spa.clientId, code_verifier: verifier });
        const bearer = { authorization: `Bearer ${tokens.body.access_token as string}` };
        for (const [origin, expected] of [
          [SPA, { 'access-control-allow-origin': SPA }],
          [OTHER_SPA, {}],
          [STRANGER, {}],
        ] as const) {
          for (const method of ['GET', 'POST']) {
            const response = await fetch(url('/oauth2/userinfo'), { method, headers: { ...bearer, origin } });
            assert.equal(response.status, 200);
            assert.deepEqual(corsHeaders(response.headers), expected, `${method} ${origin}`);
            assert.equal(response.headers.get('vary'), 'Origin');
          }
        }
        const noOrigin = await fetch(url('/oauth2/userinfo'), { headers: bearer });
        assert.deepEqual(corsHeaders(noOrigin.headers), {});
        const invalid = await fetch(url('/oauth2/userinfo'), { headers: { authorization: 'Bearer not-a-token', origin: OTHER_SPA } });
        assert.equal(invalid.status, 401);
        assert.deepEqual(corsHeaders(invalid.headers), { 'access-control-allow-origin': OTHER_SPA });
        const invalidStranger = await fetch(url('/oauth2/userinfo'), { headers: { authorization: 'Bearer not-a-token', origin: STRANGER } });
        assert.deepEqual(corsHeaders(invalidStranger.headers), {});
        assert.ok(other.active);
      });

      test('revocation from the client\'s origin is readable by it (SP-03)', async () => {
        const response = await postForm(url('/oauth2/revocation'), { token: 'unknown', client_id: spa.clientId }, { origin: SPA });
        assert.equal(response.status, 200);
        assert.deepEqual(corsHeaders(response.headers), { 'access-control-allow-origin': SPA });
        const foreign = await postForm(url('/oauth2/revocation'), { token: 'unknown', client_id: spa.clientId }, { origin: OTHER_SPA });
        assert.deepEqual(corsHeaders(foreign.headers), {});
      });

      test('discovery and the JWK Set are readable by any origin, preflight included, never with credentials (SP-07)', async () => {
        for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/oauth2/metadata.jwks']) {
          const response = await fetch(url(path), { headers: { origin: STRANGER } });
          assert.equal(response.status, 200);
          assert.deepEqual(corsHeaders(response.headers), { 'access-control-allow-origin': '*' }, path);
          const pre = await preflight(url(path), STRANGER, 'GET');
          assert.equal(pre.status, 204);
          assert.deepEqual(corsHeaders(pre.headers), { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'GET, HEAD', 'access-control-max-age': '600' }, path);
        }
      });

      test('no CORS on the authorization endpoint, login, logout, status, introspection or the identity API, even for an SPA origin (SP-08)', async () => {
        const paths = [
          `${issuer.base}/oauth2/authorization`,
          `${issuer.base}/oauth2/logout`,
          `${issuer.base}/oauth2/introspection`,
          `${issuer.base}/status`,
          `${issuer.base}/login`,
          '/customerid-rest/services/2.0/users',
          '/customerid-rest/services/2.0/me',
        ];
        for (const path of paths) {
          for (const method of ['GET', 'POST']) {
            const pre = await preflight(`${server.url}${path}`, SPA, method, 'authorization');
            assert.deepEqual(corsHeaders(pre.headers), {}, `preflight ${method} ${path}`);
            assert.ok(pre.status >= 400, `preflight ${method} ${path} is not granted (${pre.status})`);
          }
          const actual = await fetch(`${server.url}${path}`, { headers: { origin: SPA } });
          assert.deepEqual(corsHeaders(actual.headers), {}, `GET ${path}`);
        }
      });
    });
  }

  describe(`CORS: the preflight origin set follows client changes on ${db.name}`, () => {
    let server: RunningServer;
    const clock = new ManualClock(Date.now());
    before(async () => {
      server = await startServer(db, { clock });
    });
    after(async () => server.close());

    test('a client registered or deactivated after the set was read counts for preflights within its TTL; the actual answer reads the client now (SP-09)', async () => {
      const store = server.gatehouse.store;
      const tokenUrl = `${server.url}/uas/oauth2/token`;
      const origin = 'https://late-spa.example.test';
      assert.deepEqual(corsHeaders((await preflight(tokenUrl, origin, 'POST')).headers), {}, 'no client has it yet');
      const { client } = await addClient(store, { tokenEndpointAuthMethod: 'none', redirectUris: [`${origin}/cb`] });
      assert.deepEqual(corsHeaders((await preflight(tokenUrl, origin, 'POST')).headers), {}, 'the cached set is still fresh');
      clock.advance(CORS_ORIGIN_SET_TTL_MS);
      assert.equal((await preflight(tokenUrl, origin, 'POST')).headers.get('access-control-allow-origin'), origin, 're-read after the TTL');

      await store.clients.update({ ...client, active: false });
      const actual = await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: 'x', client_id: client.clientId }, { origin });
      assert.equal(actual.status, 401);
      assert.deepEqual(corsHeaders(actual.headers), {}, 'an inactive client\'s origin reads nothing, at once');
      clock.advance(CORS_ORIGIN_SET_TTL_MS);
      assert.deepEqual(corsHeaders((await preflight(tokenUrl, origin, 'POST')).headers), {}, 'dropped after the TTL');
    });
  });

  describe(`an SPA's refresh tokens on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db);
    });
    after(async () => server.close());

    test("a public SPA client's refresh token rotates on each use from its origin; replaying a used one revokes the family (SP-10, RFC 9700 §4.14.2)", async () => {
      const store = server.gatehouse.store;
      const tokenUrl = `${server.url}/uas/oauth2/token`;
      const { client } = await addClient(store, { tokenEndpointAuthMethod: 'none', redirectUris: [`${SPA}/callback`], grantTypes: ['authorization_code', 'refresh_token'], refreshTokens: true, rotateRefreshTokens: false });
      const user = await addUser(store);
      const { verifier, challenge } = pkcePair();
      const { code } = await mintCode(store, client, user, { codeChallenge: challenge, codeChallengeMethod: 'S256', scope: 'openid' });
      const first = await postForm(tokenUrl, { grant_type: 'authorization_code', code, redirect_uri: `${SPA}/callback`, client_id: client.clientId, code_verifier: verifier }, { origin: SPA });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const refresh = (token: unknown) => postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: token as string, client_id: client.clientId }, { origin: SPA });
      const second = await refresh(first.body.refresh_token);
      assert.equal(second.status, 200);
      assert.notEqual(second.body.refresh_token, first.body.refresh_token, 'rotated although the client asked for no rotation: public clients always rotate');
      const replay = await refresh(first.body.refresh_token);
      assert.equal(replay.status, 400);
      assert.equal(replay.body.error, 'invalid_grant');
      assert.equal(replay.headers.get('access-control-allow-origin'), SPA, 'the SPA can read why');
      const afterReplay = await refresh(second.body.refresh_token);
      assert.equal(afterReplay.status, 400, 'the whole family is revoked');
      assert.equal(afterReplay.body.error, 'invalid_grant');
      const userinfo = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${second.body.access_token as string}` } });
      assert.equal(userinfo.status, 401, "the family's access tokens die with it");
    });
  });
}
