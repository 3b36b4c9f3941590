/**
 * Request paths are taken only in their one normal form (security test, issue 10, finding 12a;
 * decision X3): `/%63ustomerid-rest/…` reached the identity API, so a reverse proxy that denies
 * `/customerid-rest/` could be bypassed. Percent-encoded unreserved characters (RFC 3986
 * §6.2.2.2), dot-segments raw or encoded (§6.2.2.3), `//` and `\` are refused with 400; `%2F` and
 * `;` are matched literally and reach no route but the one they spell. Sent with the raw client:
 * fetch would normalise the paths before sending them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pathProblem } from '../../src/http/plugins/limits.ts';
import { DATABASES } from '../helpers/databases.ts';
import { send, type RawResponse } from '../helpers/raw-http.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const API = { GATEHOUSE_API_USERNAME: 'api', GATEHOUSE_API_PASSWORD: 'api-password' };
const BASIC: [string, string] = ['authorization', `Basic ${Buffer.from('api:api-password').toString('base64')}`];

const ENCODED = 'percent-encodes a character that needs no encoding (RFC 3986 section 6.2.2.2)';
const SEGMENTS = 'has a dot-segment, an empty segment or a backslash (RFC 3986 section 6.2.2.3)';

/**
 * Method, target, why it is refused, and the format of the refusal: that of the endpoint the
 * router found (the identity API's error document, the OAuth JSON, the authorization endpoint's
 * HTML page), as for every other malformed request (docs/http-hardening.md).
 */
const REFUSED: [string, string, string, 'api' | 'json' | 'html'][] = [
  ['GET', '/%63ustomerid-rest/services/2.0/users/', ENCODED, 'api'],
  ['GET', 'http://127.0.0.1/%63ustomerid-rest/services/2.0/users/', ENCODED, 'api'],
  ['GET', '/customerid-rest/services/2.0/%75sers/', ENCODED, 'api'],
  ['GET', '/customerid-rest/services/2.0/users/%41bc', ENCODED, 'api'],
  ['GET', '/uas/%2Ewell-known/openid-configuration', ENCODED, 'json'],
  ['GET', '/uas/.well-known/openid-configuratio%6E', ENCODED, 'json'],
  ['POST', '/uas/oauth2/%74oken', ENCODED, 'json'],
  ['GET', '/uas/oauth2/%61uthorization?client_id=x', ENCODED, 'html'],
  ['GET', '/uas/oauth2/%2e%2e/%2e%2e/customerid-rest/services/2.0/users/', ENCODED, 'json'],
  ['GET', '/uas/%7Euser', ENCODED, 'json'],
  ['GET', '/uas/oauth2/../../customerid-rest/services/2.0/users/', SEGMENTS, 'json'],
  ['GET', '/uas/./.well-known/openid-configuration', SEGMENTS, 'json'],
  ['GET', '/uas/oauth2/..', SEGMENTS, 'json'],
  ['GET', '//customerid-rest/services/2.0/users/', SEGMENTS, 'json'],
  ['GET', '/uas//.well-known/openid-configuration', SEGMENTS, 'json'],
  ['POST', '/uas\\oauth2\\token', SEGMENTS, 'json'],
];

/** Matched literally: no route has these paths. */
const LITERAL: [string, string][] = [
  ['POST', '/uas%2Foauth2%2Ftoken'],
  ['GET', '/uas/.well-known%2Fopenid-configuration'],
  ['GET', '/uas/oauth2/..%2f..%2fcustomerid-rest/services/2.0/users/'],
  ['POST', '/uas/oauth2/token;jsessionid=x'],
  ['GET', '/customerid-rest;x/services/2.0/users/'],
  ['GET', '/uas/.well-known/openid-configuration%20'],
];

test('pathProblem: the path alone is judged, the query string is not', () => {
  assert.equal(pathProblem('/uas/oauth2/authorization?state=%61%2e..//x'), undefined);
  assert.equal(pathProblem('/eidm2/services/users/'), undefined, 'a trailing slash is no empty segment');
  assert.equal(pathProblem('/uas/.well-known/openid-configuration'), undefined, 'a segment that starts with a dot is no dot-segment');
  assert.equal(pathProblem('/a/%2F%5C%25%20%C3%A9'), undefined, 'reserved and non-ASCII characters stay encoded');
  // Every unreserved character, upper- and lower-case hex alike, and nothing else.
  for (let byte = 0; byte < 256; byte++) {
    const unreserved = /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte));
    for (const hex of [byte.toString(16).padStart(2, '0').toUpperCase(), byte.toString(16).padStart(2, '0')]) {
      assert.equal(pathProblem(`/a/%${hex}`) === ENCODED, unreserved, `%${hex}`);
    }
  }
});

for (const db of DATABASES) {
  describe(`request paths in normal form on ${db.name}`, () => {
    let server: RunningServer;
    let port: number;
    const request = (method: string, target: string): Promise<RawResponse> =>
      send(port, { method, target, headers: [BASIC], body: method === 'POST' ? 'grant_type=urn:ietf:params:oauth:grant-type:saml2-bearer' : undefined });

    before(async () => {
      server = await startServer(db, { env: API });
      port = Number(new URL(server.url).port);
    });
    after(async () => server.close());

    test('the normal form reaches the identity API and discovery', async () => {
      assert.equal((await request('GET', '/customerid-rest/services/2.0/users/')).status, 200);
      assert.equal((await request('GET', '/uas/.well-known/openid-configuration?x=%61')).status, 200);
      assert.equal((await request('GET', `http://127.0.0.1:${port}/uas/.well-known/openid-configuration`)).status, 200, 'absolute-form (RFC 9112 section 3.2.2)');
    });

    for (const [method, target, why, format] of REFUSED) {
      test(`refused with 400: ${method} ${target}`, async () => {
        const response = await request(method, target);
        assert.equal(response.status, 400);
        const description = `The request path ${why}.`;
        if (format === 'api') assert.deepEqual(JSON.parse(response.body), { error: { code: 'Invalid arguments', message: description } });
        else if (format === 'json') assert.deepEqual(JSON.parse(response.body), { error: 'invalid_request', error_description: description });
        else {
          assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
          assert.ok(response.body.includes('invalid_request'), 'the error page names the error');
        }
        assert.equal(response.headers['x-frame-options'], 'DENY');
      });
    }

    for (const [method, target] of LITERAL) {
      test(`matched literally, no route: ${method} ${target}`, async () => {
        const response = await request(method, target);
        assert.equal(response.status, 404);
        assert.equal((JSON.parse(response.body) as { error: string }).error, 'not_found');
      });
    }
  });
}
