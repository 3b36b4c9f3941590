/**
 * Property-based fuzzing of every route at once — discovery, JWKS, health, the stylesheet, the
 * protocol endpoints and paths that do not exist — with random methods, mutated paths, random
 * headers (cookies, credentials, languages, forwarded-for through a trusted proxy, content types)
 * and random bodies, plus requests Node's own parser must refuse (bad bytes in the request line,
 * CR/LF and NUL in headers, headers over the limit). Nothing may answer 5xx, hang, leak
 * internals, lack the security headers, or change what is stored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { DATABASES } from '../helpers/databases.ts';
import { assertNoProcessFailures, assertSafeResponse, CONTENT_TYPES, encodePairs, fingerprint, fuzzParams, hostileString, installProcessHandlers, isTransportRefusal, NASTY_STRINGS, send, startFuzzTarget, targetOf, type FuzzTarget } from './harness.ts';
import { encoding } from './mutate.ts';

installProcessHandlers();

const PATHS = [
  '/uas/.well-known/openid-configuration',
  '/uas/.well-known/oauth-authorization-server',
  '/uas/oauth2/metadata.jwks',
  '/health/live',
  '/health/ready',
  '/uas/assets/login.css',
  '/uas/oauth2/authorization',
  '/uas/oauth2/authorization/login',
  '/uas/oauth2/authorization/second-factor',
  '/uas/oauth2/device/second-factor',
  '/uas/oauth2/authorization/consent',
  '/uas/oauth2/token',
  '/uas/oauth2/introspection',
  '/uas/oauth2/revocation',
  '/uas/oauth2/userinfo',
  '/uas/oauth2/logout',
  '/uas/status',
  // Dynamic client registration (RFC 7591/7592), switched on below: without an initial access token nothing is registered.
  '/uas/oauth2/register',
  '/uas/oauth2/register/00000000-0000-4000-8000-000000000000',
  '/',
  '/uas',
  '/uas/',
  '/favicon.ico',
  '/no/such/thing',
];

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'SEARCH', 'get', 'G\u0000T', 'GET /x'];

/** Path mutations that have fooled routers and proxies before. */
const pathMutation = fc.constantFrom(
  (p: string) => p,
  (p: string) => p,
  (p: string) => `${p}/`,
  (p: string) => `/${p}`,
  (p: string) => p.toUpperCase(),
  (p: string) => p.replace(/\//g, '%2F'),
  (p: string) => p.replace(/o/g, '%6F'),
  (p: string) => p.replace(/o/g, '%256F'),
  (p: string) => `${p}%00`,
  (p: string) => `${p};jsessionid=1`,
  (p: string) => `${p}/..`,
  (p: string) => `/uas/../${p.slice(1)}`,
  (p: string) => `${p}/..;/`,
  (p: string) => `${p}#fragment`,
  (p: string) => `${p}%`,
  (p: string) => `${p}%FF`,
  (p: string) => `${p}/${'a'.repeat(300)}`,
  (p: string) => `${p}${'/x'.repeat(2000)}`,
  (p: string) => `http://evil.example${p}`,
  () => '*',
  (p: string) => p.replace('/uas', '/UAS'),
);

const HEADER_NAMES = ['cookie', 'authorization', 'accept', 'accept-language', 'content-type', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'forwarded', 'host', 'origin', 'referer', 'user-agent', 'if-none-match', 'range', 'transfer-encoding', 'expect', 'x-request-id', 'dpop', 'upgrade'];

const headerValue = fc.oneof(
  hostileString(),
  fc.constantFrom(
    'gatehouse_session=x; gatehouse_csrf=y',
    'Bearer abc',
    'Basic Og==',
    'fi-FI,fi;q=0.9,en;q=0.8',
    'xx;q=NaN, *;q=-1, ;;;',
    `${'fi,'.repeat(2000)}en`,
    '1.2.3.4, 5.6.7.8',
    'unknown, ::1, not-an-ip',
    '300.1.1.1',
    'for="[2001:db8::1]:4711";proto=https',
    'bytes=0-1,2-3',
    '100-continue',
    'websocket',
    '*/*',
    'application/json;q=0.9, text/html',
  ),
);

for (const db of DATABASES) {
  describe(`fuzz: any endpoint on ${db.name}`, () => {
    let t: FuzzTarget;
    before(async () => {
      // Forwarded headers are read only from trusted proxies: trust the test's own address so they are parsed.
      t = await startFuzzTarget(db, { GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1', GATEHOUSE_DYNAMIC_REGISTRATION: 'initial_access_token' });
    });
    after(async () => {
      await t?.close();
      assertNoProcessFailures();
    });
    // What Node's parser and the router refuse never reaches the store: once is enough.
    const once = db === DATABASES[0] ? {} : { skip: 'refused before any store is asked: run on the first database only' };

    test('random methods, paths, queries, headers and bodies: safe answers and nothing changed', async () => {
      const pair = fc.tuple(hostileString(), hostileString());
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...METHODS),
          fc.constantFrom(...PATHS),
          pathMutation,
          fc.array(pair, { maxLength: 6 }),
          encoding,
          fc.array(fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...HEADER_NAMES) }, hostileString()), headerValue), { maxLength: 5 }),
          fc.option(fc.oneof(fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)), fc.array(pair, { maxLength: 8 }).map((pairs) => encodePairs(pairs, 'raw')), fc.constantFrom('{}', '{"a":', '<x/>', 'a'.repeat(70_000))), { nil: undefined }),
          fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }),
          async (method, path, mutatePath, queryPairs, how, headerPairs, body, type) => {
            const target = targetOf(mutatePath(path), encodePairs(queryPairs, how));
            const headers = headerPairs
              // The harness sets Host, Connection and Content-Length itself; a second one of those is a different test.
              .filter(([name]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(name.toLowerCase()))
              .map(([name, value]): [string, string] => [Buffer.from(name, 'utf8').toString('latin1'), Buffer.from(value, 'utf8').toString('latin1')]);
            if (type !== undefined) headers.push(['content-type', type]);
            const before = await fingerprint(t.server);
            const response = await send(t.port, { method, target, headers, body });
            const context = `${method} ${target.slice(0, 200)} ${JSON.stringify(headers).slice(0, 300)}`;
            assertSafeResponse(response, context, [...queryPairs.flat(), ...headerPairs.flat(), typeof body === 'string' ? body : ''].join('\n'));
            assert.deepEqual(await fingerprint(t.server), before, context);
          },
        ),
        fuzzParams(150),
      );
    });

    test("requests Node's parser refuses get a JSON invalid_request with the security headers, promptly", once, async () => {
      const rawTargets = fc.oneof(
        fc.constantFrom('/uas/status?a=\u00ff', '/uas/status?a=b c', '/uas/oauth2/token\u0000', '/uas/oauth2/userinfo?x=\r\ny', '/\t', 'no-slash'),
        fc.string({ unit: 'binary-ascii', maxLength: 30 }).map((s) => `/uas/status?${s}`),
      );
      await fc.assert(
        fc.asyncProperty(rawTargets, fc.constantFrom<[string, string] | undefined>(undefined, ['x-bad', 'a\u0000b'], ['x-bad', 'a\rb'], ['bad name', 'x'], ['x-bad', 'a\u007fb'], ['', 'empty-name']), async (target, badHeader) => {
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method: 'GET', target, headers: badHeader === undefined ? [] : [badHeader] });
          assertSafeResponse(response, `GET ${JSON.stringify(target)} ${JSON.stringify(badHeader)}`);
          if (response.status === 400 && response.headers['content-type']?.startsWith('application/json')) assert.ok(isTransportRefusal(response) || JSON.parse(response.body).error === 'invalid_request');
          assert.deepEqual(await fingerprint(t.server), before);
        }),
        fuzzParams(40),
      );
    });

    test('request lines and headers around the 16 KiB limit: 431 or a normal answer, never a hang', once, async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 15_000, max: 40_000 }), fc.constantFrom('url', 'header', 'cookie', 'many-headers'), fc.constantFrom(...PATHS), async (size, where, path) => {
          const filler = 'a'.repeat(size);
          const headers: [string, string][] =
            where === 'header' ? [['x-filler', filler]]
            : where === 'cookie' ? [['cookie', `gatehouse_session=${filler}`]]
            : where === 'many-headers' ? Array.from({ length: Math.floor(size / 20) }, (_, i): [string, string] => [`x-h${i}`, 'v'.repeat(10)])
            : [];
          const target = where === 'url' ? `${path}?x=${filler}` : path;
          const response = await send(t.port, { method: 'GET', target, headers });
          const context = `${where} of ${size}`;
          assertSafeResponse(response, context);
          if (response.status === 431) assert.ok(isTransportRefusal(response), context);
        }),
        fuzzParams(20),
      );
    });

    test('every nasty string as every part of a request to discovery, JWKS and health', once, async () => {
      for (const path of PATHS.slice(0, 6)) {
        for (const nasty of NASTY_STRINGS) {
          const value = Buffer.from(nasty, 'utf8').toString('latin1');
          const response = await send(t.port, { method: 'GET', target: targetOf(path, `${encodeURIComponent(nasty.toWellFormed())}=${encodeURIComponent(nasty.toWellFormed())}`), headers: [['accept-language', value.slice(0, 8000)]] });
          assertSafeResponse(response, `${path} with ${JSON.stringify(nasty.slice(0, 20))}`, nasty);
        }
      }
    });
  });
}
