/**
 * Property-based fuzzing of the back channel — token, introspection, revocation, userinfo —
 * against a real listening server: valid requests mutated (parameters dropped, repeated,
 * replaced, overlong, mis-encoded; credentials garbled; content types swapped) and random ones.
 * Every answer: no 5xx, no internals in the body, the security headers; a refused request changes
 * nothing stored (a code redemption may only consume its code, RFC 6749 §10.5 / decision 7).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { DATABASES } from '../helpers/databases.ts';
import { RP_REDIRECT_URI } from '../helpers/fixtures.ts';
import { basic } from '../helpers/back-channel.ts';
import { assertNoProcessFailures, assertSafeResponse, CONTENT_TYPES, encodePairs, fingerprint, fuzzParams, hostileString, installProcessHandlers, send, startFuzzTarget, type Fingerprint, type FuzzTarget, type RawResponse } from './harness.ts';
import { build, contentType, encoding, plan, sentText, type Pairs } from './mutate.ts';

installProcessHandlers();

const TOKEN_NAMES = ['grant_type', 'code', 'redirect_uri', 'client_id', 'client_secret', 'code_verifier', 'refresh_token', 'scope', 'resource', 'audience'];

type Credentials = 'basic' | 'basic-wrong' | 'basic-hostile' | 'post' | 'none' | 'garbage' | 'both' | 'assertion' | 'assertion-hostile';

const credentials: fc.Arbitrary<{ kind: Credentials; id: string; secret: string; header: string }> = fc.record({
  kind: fc.oneof({ weight: 5, arbitrary: fc.constant<Credentials>('basic') }, { weight: 1, arbitrary: fc.constantFrom<Credentials>('basic-wrong', 'basic-hostile', 'post', 'none', 'garbage', 'both') }, { weight: 2, arbitrary: fc.constantFrom<Credentials>('assertion', 'assertion-hostile') }),
  id: hostileString(),
  secret: hostileString(),
  header: fc.oneof(hostileString(), fc.constantFrom('Basic', 'Basic ', 'Basic !!!', 'Basic Og==', 'Basic =', 'Bearer x', 'basic   ', `Basic ${'A'.repeat(9000)}`, 'Basic %00', 'Basic w7/Dvw==')),
});

/** Applies the credentials: a header, or client_id/client_secret at the front of the pairs (so mutations reach them). */
function withCredentials(c: { kind: Credentials; id: string; secret: string; header: string }, clientId: string, secret: string, pairs: Pairs): { headers: [string, string][]; pairs: Pairs } {
  switch (c.kind) {
    case 'basic':
      return { headers: [['authorization', basic(clientId, secret)]], pairs };
    case 'basic-wrong':
      return { headers: [['authorization', basic(clientId, `${secret}x`)]], pairs };
    case 'basic-hostile':
      // encodeURIComponent refuses lone surrogates; the server would only ever see their UTF-8 replacement.
      return { headers: [['authorization', basic(c.id.toWellFormed(), c.secret.toWellFormed())]], pairs };
    case 'post':
      return { headers: [], pairs: [['client_id', clientId], ['client_secret', secret], ...pairs] };
    case 'none':
      return { headers: [], pairs };
    case 'garbage':
      return { headers: [['authorization', latin1(c.header)]], pairs };
    case 'both':
      return { headers: [['authorization', basic(clientId, secret)]], pairs: [['client_id', clientId], ['client_secret', secret], ...pairs] };
    case 'assertion':
      // A JWT client assertion (RFC 7523) naming the client, its header alg and signature hostile: never verifies.
      return { headers: [], pairs: [['client_assertion_type', JWT_BEARER], ['client_assertion', unsignedJwt({ alg: c.header, typ: 'JWT' }, { iss: clientId, sub: clientId, aud: c.id, jti: c.secret, exp: 9e9 })], ...pairs] };
    case 'assertion-hostile':
      // Anything as the assertion, under the right type (and, through the mutations, any type).
      return { headers: [], pairs: [['client_assertion_type', JWT_BEARER], ['client_assertion', c.secret], ...pairs] };
  }
}

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** A JWT of these parts with a made-up signature. */
function unsignedJwt(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  return `${[header, claims].map((part) => Buffer.from(JSON.stringify(part)).toString('base64url')).join('.')}.c2ln`;
}

/** A header value goes on the wire as bytes: text outside latin1 is sent as its UTF-8 bytes. */
function latin1(text: string): string {
  // eslint-disable-next-line no-control-regex
  return /[^\x00-\xff]/.test(text) ? Buffer.from(text, 'utf8').toString('latin1') : text;
}

function headersWithType(headers: [string, string][], type: string | undefined): [string, string][] {
  return type === undefined ? headers : [...headers, ['content-type', latin1(type)]];
}

/** What may differ after a request: every other count must stay. */
function assertOnlyChanged(before: Fingerprint, after: Fingerprint, allowed: readonly (keyof Fingerprint)[], context: string): void {
  for (const key of Object.keys(before) as (keyof Fingerprint)[]) {
    if (!allowed.includes(key)) assert.equal(after[key], before[key], `${context}: ${key} changed from ${before[key]} to ${after[key]}`);
  }
}

function describeResponse(response: RawResponse): string {
  return `${response.status} ${response.body.slice(0, 200)}`;
}

for (const db of DATABASES) {
  describe(`fuzz: back channel on ${db.name}`, () => {
    let t: FuzzTarget;
    before(async () => {
      t = await startFuzzTarget(db);
    });
    after(async () => {
      await t?.close();
      assertNoProcessFailures();
    });

    test('token, code grant: mutated redemptions; a refused one issues nothing and at most consumes its code', async () => {
      const { client, secret } = await t.newClient();
      await fc.assert(
        fc.asyncProperty(plan(TOKEN_NAMES), credentials, contentType, async (how, creds, type) => {
          const code = await t.freshCode(client);
          const { headers, pairs } = withCredentials(creds, client.clientId, secret, [['grant_type', 'authorization_code'], ['code', code], ['redirect_uri', RP_REDIRECT_URI]]);
          const request = build(pairs, how);
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method: 'POST', target: '/uas/oauth2/token', headers: headersWithType(headers, type), body: request.wire });
          const context = `token ${request.wire.slice(0, 300)}`;
          assertSafeResponse(response, context, sentText(request.pairs, request.wire));
          assert.equal(response.headers['cache-control'], 'no-store', context);
          const after = await fingerprint(t.server);
          if (response.status === 200) {
            const body = JSON.parse(response.body) as Record<string, unknown>;
            assert.equal(body.token_type, 'Bearer', context);
            assert.equal(typeof body.access_token, 'string', context);
            assert.equal(after.consumed, before.consumed + 1, context);
          } else {
            assert.match(response.headers['content-type'] ?? '', /^application\/json/, `${context}: ${describeResponse(response)}`);
            assert.equal(typeof (JSON.parse(response.body) as { error?: unknown }).error, 'string', context);
            assertOnlyChanged(before, after, ['consumed'], `${context} → ${describeResponse(response)}`);
          }
        }),
        fuzzParams(60),
      );
    });

    test('token, refresh grant: mutated refreshes; a refused one changes nothing', async () => {
      const { client, secret } = await t.newClient();
      const { refreshToken } = await t.freshTokens(client, secret);
      await fc.assert(
        fc.asyncProperty(plan(TOKEN_NAMES), credentials, contentType, async (how, creds, type) => {
          const { headers, pairs } = withCredentials(creds, client.clientId, secret, [['grant_type', 'refresh_token'], ['refresh_token', refreshToken], ['scope', 'openid']]);
          const request = build(pairs, how);
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method: 'POST', target: '/uas/oauth2/token', headers: headersWithType(headers, type), body: request.wire });
          const context = `refresh ${request.wire.slice(0, 300)}`;
          assertSafeResponse(response, context, sentText(request.pairs, request.wire));
          const after = await fingerprint(t.server);
          if (response.status !== 200) assertOnlyChanged(before, after, [], `${context} → ${describeResponse(response)}`);
          else assertOnlyChanged(before, after, ['tokens', 'rotated'], context);
        }),
        fuzzParams(40),
      );
    });

    test('token: random forms under random content types and credentials change nothing', async () => {
      const pair = fc.tuple(fc.oneof(fc.constantFrom(...TOKEN_NAMES), hostileString()), hostileString());
      await fc.assert(
        fc.asyncProperty(fc.array(pair, { maxLength: 12 }), encoding, fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined), credentials, async (pairs, how, type, creds) => {
          const { headers, pairs: all } = withCredentials(creds, t.client.clientId, 'not-the-secret', pairs);
          const wire = encodePairs(all, how);
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method: 'POST', target: '/uas/oauth2/token', headers: headersWithType(headers, type), body: wire });
          assertSafeResponse(response, `token ${wire.slice(0, 300)}`, sentText(all, wire));
          assert.ok(response.status >= 400, `random token request accepted: ${wire.slice(0, 300)}`);
          assertOnlyChanged(before, await fingerprint(t.server), [], `token ${wire.slice(0, 300)}`);
        }),
        fuzzParams(60),
      );
    });

    test('introspection: mutated requests answer JSON and never change anything', async () => {
      const { client, secret } = await t.newClient();
      const { accessToken, refreshToken } = await t.freshTokens(client, secret);
      await fc.assert(
        fc.asyncProperty(plan(['token', 'token_type_hint', 'client_id', 'client_secret']), credentials, contentType, fc.boolean(), async (how, creds, type, refresh) => {
          const { headers, pairs } = withCredentials(creds, client.clientId, secret, [['token', refresh ? refreshToken : accessToken], ['token_type_hint', refresh ? 'refresh_token' : 'access_token']]);
          const request = build(pairs, how);
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method: 'POST', target: '/uas/oauth2/introspection', headers: headersWithType(headers, type), body: request.wire });
          const context = `introspection ${request.wire.slice(0, 300)}`;
          assertSafeResponse(response, context, sentText(request.pairs, request.wire));
          assert.match(response.headers['content-type'] ?? '', /^application\/json/, context);
          assertOnlyChanged(before, await fingerprint(t.server), [], context);
        }),
        fuzzParams(50),
      );
    });

    test('revocation: mutated requests; a refused one revokes nothing', async () => {
      const { client, secret } = await t.newClient();
      await fc.assert(
        fc.asyncProperty(plan(['token', 'token_type_hint', 'client_id', 'client_secret']), credentials, contentType, fc.boolean(), async (how, creds, type, refresh) => {
          const tokens = await t.freshTokens(client, secret);
          const { headers, pairs } = withCredentials(creds, client.clientId, secret, [['token', refresh ? tokens.refreshToken : tokens.accessToken], ['token_type_hint', refresh ? 'refresh_token' : 'access_token']]);
          const request = build(pairs, how);
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method: 'POST', target: '/uas/oauth2/revocation', headers: headersWithType(headers, type), body: request.wire });
          const context = `revocation ${request.wire.slice(0, 300)}`;
          assertSafeResponse(response, context, sentText(request.pairs, request.wire));
          const after = await fingerprint(t.server);
          if (response.status === 200) assertOnlyChanged(before, after, ['revoked'], context);
          else assertOnlyChanged(before, after, [], `${context} → ${describeResponse(response)}`);
        }),
        fuzzParams(40),
      );
    });

    test('userinfo: mutated bearer headers, bodies and queries never change anything', async () => {
      const { accessToken } = await t.freshTokens();
      const bearer = fc.oneof(
        { weight: 3, arbitrary: fc.constant(`Bearer ${accessToken}`) },
        fc.constantFrom(`bearer ${accessToken}`, `Bearer  ${accessToken} `, `Bearer ${accessToken}x`, `Bearer ${accessToken}, Bearer ${accessToken}`, `Basic ${accessToken}`, 'Bearer', 'Bearer ', `Bearer ${accessToken.slice(1)}`, `Bearer ${'A'.repeat(9000)}`, `Bearer ${accessToken}\u0000`),
        hostileString().map((s) => `Bearer ${s}`),
        hostileString(),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'),
          fc.option(bearer, { nil: undefined }),
          plan(['access_token', 'schema', 'claims']),
          fc.constantFrom<'body' | 'query' | 'none'>('body', 'query', 'none'),
          contentType,
          async (method, authorization, how, where, type) => {
            const request = build(where === 'none' ? [] : [['access_token', accessToken]], how);
            const headers: [string, string][] = authorization === undefined ? [] : [['authorization', latin1(authorization)]];
            const target = where === 'query' ? `/uas/oauth2/userinfo?${request.wire}` : '/uas/oauth2/userinfo';
            const body = where === 'body' ? request.wire : undefined;
            const before = await fingerprint(t.server);
            const response = await send(t.port, { method, target: latin1(target), headers: body === undefined ? headers : headersWithType(headers, type), body });
            const context = `userinfo ${method} ${target.slice(0, 200)} ${authorization?.slice(0, 80)}`;
            assertSafeResponse(response, context, sentText(request.pairs, request.wire, authorization ?? ''));
            if (response.status === 401) assert.match(response.headers['www-authenticate'] ?? '', /^Bearer /, context);
            assertOnlyChanged(before, await fingerprint(t.server), [], context);
          },
        ),
        fuzzParams(60),
      );
    });
  });
}
