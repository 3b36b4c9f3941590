/**
 * Property-based fuzzing of the front channel — the authorization endpoint (GET and POST), the
 * login form's POST, RP-initiated logout and /uas/status — against a real listening server.
 * Valid requests are mutated and random ones thrown; every answer must be safe (no 5xx, no
 * internals, security headers), an error must never redirect anywhere but the registered URI,
 * and a refused request must leave the store as it was.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { Client } from '../../src/domain/client.ts';
import { fingerprint as sessionFingerprint } from '../../src/observability/audit.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestClient, RP_REDIRECT_URI } from '../helpers/fixtures.ts';
import { assertNoProcessFailures, assertSafeResponse, CONTENT_TYPES, encodePairs, fingerprint, fuzzParams, hostileString, installProcessHandlers, isTransportRefusal, PASSWORD, send, startFuzzTarget, targetOf, type Fingerprint, type FuzzTarget, type RawResponse } from './harness.ts';
import { build, contentType, encoding, plan, sentText } from './mutate.ts';

installProcessHandlers();

const AUTHORIZATION_NAMES = [
  'client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'prompt', 'max_age',
  'login_hint', 'id_token_hint', 'ui_locales', 'display', 'acr_values', 'response_mode', 'request', 'request_uri', 'claims',
];
const AUTHORIZATION_PATH = '/uas/oauth2/authorization';
const LOGIN_PATH = '/uas/oauth2/authorization/login';
const LOGOUT_PATH = '/uas/oauth2/logout';
const CONSENT_PATH = '/uas/oauth2/authorization/consent';

function assertOnlyChanged(before: Fingerprint, after: Fingerprint, allowed: readonly (keyof Fingerprint)[], context: string): void {
  for (const key of Object.keys(before) as (keyof Fingerprint)[]) {
    if (!allowed.includes(key)) assert.equal(after[key], before[key], `${context}: ${key} changed from ${before[key]} to ${after[key]}`);
  }
}

/**
 * An authorization-style answer: a page (login form or error page), or a redirect to the one
 * registered URI carrying either a code or an error — never anywhere else. Returns which.
 */
function classify(response: RawResponse, registered: readonly string[], context: string): 'page' | 'code' | 'error' | 'transport' {
  if (isTransportRefusal(response)) return 'transport';
  if (response.status === 302 || response.status === 303) {
    const location = response.headers.location ?? '';
    assert.ok(registered.some((uri) => location.startsWith(`${uri}?`) || location.startsWith(`${uri}&`)), `${context}: redirect to an unregistered place: ${location}`);
    assert.equal(response.headers['cache-control'], 'no-store', context);
    const params = new URL(location).searchParams;
    if (params.has('code')) {
      assert.equal(params.get('error'), null, context);
      return 'code';
    }
    assert.ok(params.get('error'), `${context}: a redirect without code or error: ${location}`);
    return 'error';
  }
  assert.match(response.headers['content-type'] ?? '', /^text\/html/, `${context}: ${response.status} ${response.body.slice(0, 200)}`);
  assert.equal(response.headers.location, undefined, context);
  return 'page';
}

/** The CSRF token and cookie of a login form, double-submitted (the server keeps no state for it). */
function csrfPair(): { token: string; cookie: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, cookie: `gatehouse_csrf=${token}` };
}

const cookieHeader = fc.oneof(
  fc.constant(undefined),
  hostileString().map((s) => `gatehouse_session=${s}`),
  hostileString(),
  fc.constantFrom('gatehouse_session=', 'gatehouse_session', '=;=;', 'gatehouse_session=a; gatehouse_session=b', 'gatehouse_csrf=%E0%A4%A', `gatehouse_session=${'a'.repeat(5000)}`, '__proto__=1'),
);

for (const db of DATABASES) {
  describe(`fuzz: front channel on ${db.name}`, () => {
    let t: FuzzTarget;
    before(async () => {
      t = await startFuzzTarget(db);
    });
    after(async () => {
      await t?.close();
      assertNoProcessFailures();
    });

    const validAuthorization = (extra: [string, string][] = []): [string, string][] => [
      ['client_id', t.client.clientId],
      ['redirect_uri', RP_REDIRECT_URI],
      ['response_type', 'code'],
      ['scope', 'openid profile'],
      ['state', 'st-1'],
      ['nonce', 'n-1'],
      ...extra,
    ];

    test('authorization, GET and POST: mutated requests with a live session; an error never issues a code, a refusal changes nothing', async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('GET', 'POST'), plan(AUTHORIZATION_NAMES), contentType, fc.boolean(), async (method, how, type, withSession) => {
          const session = withSession ? await t.freshSession() : undefined;
          const request = build(validAuthorization(), how);
          const headers: [string, string][] = session === undefined ? [] : [['cookie', `gatehouse_session=${session.cookie}`]];
          if (method === 'POST' && type !== undefined) headers.push(['content-type', type]);
          const target = method === 'GET' ? targetOf(AUTHORIZATION_PATH, request.wire) : AUTHORIZATION_PATH;
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method, target, headers, body: method === 'POST' ? request.wire : undefined });
          const context = `${method} authorization ${request.wire.slice(0, 300)}`;
          assertSafeResponse(response, context, sentText(request.pairs, request.wire));
          const outcome = classify(response, [RP_REDIRECT_URI], context);
          const after = await fingerprint(t.server);
          // A code is a new row; using the session moves its idle deadline (docs/authorization.md).
          if (outcome === 'code') assertOnlyChanged(before, after, ['codes', 'sessionDeadlines'], context);
          else assertOnlyChanged(before, after, [], `${context} → ${response.status} ${outcome}`);
        }),
        fuzzParams(60),
      );
    });

    test('authorization: random parameters, cookies and content types never redirect anywhere unregistered and change nothing', async () => {
      const name = fc.oneof(fc.constantFrom(...AUTHORIZATION_NAMES), hostileString());
      const value = fc.oneof(hostileString(), fc.constantFrom('code', 'openid', 'none', 'login', RP_REDIRECT_URI, 'S256', 'plain', 'page', 'popup', 'query', 'form_post'));
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('GET', 'POST', 'HEAD'), fc.array(fc.tuple(name, value), { maxLength: 12 }), fc.boolean(), encoding, cookieHeader, fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined), async (method, pairs, knownClient, how, cookie, type) => {
          const all: [string, string][] = knownClient ? [['client_id', t.client.clientId], ...pairs] : pairs;
          const wire = encodePairs(all, how);
          const headers: [string, string][] = cookie === undefined ? [] : [['cookie', Buffer.from(cookie, 'utf8').toString('latin1')]];
          if (method === 'POST' && type !== undefined) headers.push(['content-type', type]);
          const target = method === 'POST' ? AUTHORIZATION_PATH : targetOf(AUTHORIZATION_PATH, wire);
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method, target, headers, body: method === 'POST' ? wire : undefined });
          const context = `${method} authorization ${wire.slice(0, 300)}`;
          assertSafeResponse(response, context, sentText(all, wire, cookie ?? ''));
          classify(response, [RP_REDIRECT_URI], context);
          assertOnlyChanged(before, await fingerprint(t.server), [], context);
        }),
        fuzzParams(80),
      );
    });

    test('login POST: mutated form submissions; only the right password signs in, a refusal creates no session and no code', async () => {
      await fc.assert(
        fc.asyncProperty(plan([...AUTHORIZATION_NAMES, 'username', 'password', 'csrf_token'], 3), contentType, fc.constantFrom('match', 'missing', 'other'), async (how, type, csrfCase) => {
          const csrf = csrfPair();
          const fields: [string, string][] = [...validAuthorization(), ['csrf_token', csrf.token], ['username', t.user.username], ['password', PASSWORD]];
          const request = build(fields, how);
          const headers: [string, string][] = [];
          if (csrfCase === 'match') headers.push(['cookie', csrf.cookie]);
          if (csrfCase === 'other') headers.push(['cookie', csrfPair().cookie]);
          if (type !== undefined) headers.push(['content-type', type]);
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method: 'POST', target: LOGIN_PATH, headers, body: request.wire });
          const context = `login ${request.wire.slice(0, 300)}`;
          assertSafeResponse(response, context, sentText(request.pairs, request.wire));
          const outcome = classify(response, [RP_REDIRECT_URI], context);
          const after = await fingerprint(t.server);
          if (outcome === 'code') {
            assert.equal(response.status, 303, context);
            assert.equal(csrfCase, 'match', `${context}: signed in without the CSRF cookie`);
            assert.ok(request.pairs.some(([n, v]) => n === 'password' && v === PASSWORD), `${context}: signed in without the password`);
            assertOnlyChanged(before, after, ['codes', 'sessions', 'sessionDeadlines'], context);
          } else {
            assertOnlyChanged(before, after, [], `${context} → ${response.status} ${outcome}`);
          }
        }),
        fuzzParams(25),
      );
    });

    test('consent POST: mutated answers of a third-party client\'s page; only a whole, CSRF-matched allow issues a code and remembers a consent', async () => {
      const { client: thirdParty } = await createTestClient(t.store, { metadata: { consent_required: true } });
      const authorization = (client: Client): [string, string][] => [['client_id', client.clientId], ...validAuthorization().slice(1)];
      await fc.assert(
        fc.asyncProperty(plan([...AUTHORIZATION_NAMES, 'csrf_token', 'consent_session', 'decision'], 3), contentType, fc.constantFrom('match', 'missing', 'other'), fc.constantFrom('allow', 'deny'), async (how, type, csrfCase, decision) => {
          const session = await t.freshSession();
          const csrf = csrfPair();
          const fields: [string, string][] = [...authorization(thirdParty), ['csrf_token', csrf.token], ['consent_session', sessionFingerprint(session.sessionIndex)], ['decision', decision]];
          const request = build(fields, how);
          const cookies = [`gatehouse_session=${session.cookie}`];
          if (csrfCase === 'match') cookies.push(csrf.cookie);
          if (csrfCase === 'other') cookies.push(csrfPair().cookie);
          const headers: [string, string][] = [['cookie', cookies.join('; ')]];
          if (type !== undefined) headers.push(['content-type', type]);
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method: 'POST', target: CONSENT_PATH, headers, body: request.wire });
          const context = `consent ${request.wire.slice(0, 300)}`;
          assertSafeResponse(response, context, sentText(request.pairs, request.wire));
          const outcome = classify(response, [RP_REDIRECT_URI], context);
          const after = await fingerprint(t.server);
          if (outcome === 'code') {
            assert.equal(response.status, 303, context);
            assert.equal(csrfCase, 'match', `${context}: consented without the CSRF cookie`);
            assert.ok(request.pairs.some(([n, v]) => n === 'decision' && v === 'allow'), `${context}: a code without allow`);
            assertOnlyChanged(before, after, ['codes', 'sessionDeadlines', 'consents'], context);
          } else {
            assertOnlyChanged(before, after, [], `${context} → ${response.status} ${outcome}`);
          }
        }),
        fuzzParams(40),
      );
    });

    test('logout, GET and POST: mutated requests; an error page ends nothing', async () => {
      const { idToken } = await t.freshTokens();
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('GET', 'POST'), plan(['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'ui_locales']), contentType, fc.boolean(), async (method, how, type, withSession) => {
          const session = withSession ? await t.freshSession() : undefined;
          const request = build([['id_token_hint', idToken], ['post_logout_redirect_uri', 'https://rp.example.test/bye'], ['state', 'bye-1']], how);
          const headers: [string, string][] = session === undefined ? [] : [['cookie', `gatehouse_session=${session.cookie}`]];
          if (method === 'POST' && type !== undefined) headers.push(['content-type', type]);
          const target = method === 'GET' ? targetOf(LOGOUT_PATH, request.wire) : LOGOUT_PATH;
          const before = await fingerprint(t.server);
          const response = await send(t.port, { method, target, headers, body: method === 'POST' ? request.wire : undefined });
          const context = `${method} logout ${request.wire.slice(0, 300)}`;
          assertSafeResponse(response, context, sentText(request.pairs, request.wire));
          const after = await fingerprint(t.server);
          if (response.status === 302) {
            assert.ok((response.headers.location ?? '').startsWith('https://rp.example.test/bye'), `${context}: ${response.headers.location}`);
          } else if (!isTransportRefusal(response)) {
            assert.match(response.headers['content-type'] ?? '', /^text\/html/, context);
          }
          if (response.status >= 400) assertOnlyChanged(before, after, [], `${context} → ${response.status}`);
          else assertOnlyChanged(before, after, ['sessions', 'sessionDeadlines', 'revoked'], context);
        }),
        fuzzParams(40),
      );
    });

    test('/uas/status: mutated and random queries answer JSON or XML and change at most a session deadline', async () => {
      const session = await t.freshSession();
      await fc.assert(
        fc.asyncProperty(plan(['entityID', 'sessionIndex', 'refresh', 'type']), cookieHeader, async (how, cookie) => {
          const request = build([['entityID', t.client.clientId], ['sessionIndex', session.sessionIndex], ['refresh', 'true'], ['type', 'application/json']], how);
          const before = await fingerprint(t.server);
          const headers: [string, string][] = cookie === undefined ? [] : [['cookie', Buffer.from(cookie, 'utf8').toString('latin1')]];
          const response = await send(t.port, { method: 'GET', target: targetOf('/uas/status', request.wire), headers });
          const context = `status ${request.wire.slice(0, 300)}`;
          assertSafeResponse(response, context, sentText(request.pairs, request.wire));
          assert.match(response.headers['content-type'] ?? '', /^application\/(json|xml)/, context);
          assertOnlyChanged(before, await fingerprint(t.server), response.status === 200 ? ['sessionDeadlines'] : [], context);
        }),
        fuzzParams(50),
      );
    });
  });
}
