/**
 * Property-based fuzzing of the management API (every route of MANAGE_ROUTES, and paths beside
 * them) against a real listening server: random methods with real, unknown and hostile ids;
 * random query parameters; JSON (client metadata, policy documents, anything) and garbage bodies
 * under any content type; every kind of caller and garbled credentials. Every answer: no 5xx, no
 * internals, the security headers, no-store, errors as problem documents; a request that is
 * refused, or made by anyone but an administrator, changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { MANAGE_ROUTES } from '../../src/http/manage-api/routes/index.ts';
import { encodeCursor } from '../../src/http/manage-api/pagination.ts';
import { MANAGE_API_PATH } from '../../src/manage/management-clients.ts';
import { DATABASES } from '../helpers/databases.ts';
import { manageTokens, type ManageTokens } from '../helpers/manage.ts';
import { assertNoProcessFailures, assertSafeResponse, CONTENT_TYPES, encodePairs, fingerprint, fuzzParams, hostileString, installProcessHandlers, send, startFuzzTarget, targetOf, type FuzzTarget } from './harness.ts';
import { encoding } from './mutate.ts';

installProcessHandlers();

const MEMBERS = ['client_name', 'redirect_uris', 'grant_types', 'token_endpoint_auth_method', 'aud', 'scope', 'active', 'authorization_policy', 'refresh_tokens', 'name', 'access', 'claims', 'alg', 'client_id', '__proto__', 'constructor'];
const QUERY = ['limit', 'cursor', 'q', 'access_token', 'unknown'];

const JSON_BODIES = fc.oneof(
  fc.dictionary(fc.oneof(fc.constantFrom(...MEMBERS), hostileString()), fc.oneof(fc.array(hostileString(), { maxLength: 3 }), hostileString(), fc.constant(null), fc.integer(), fc.boolean(), fc.constant({ groups: ['x'] })), { maxKeys: 6 }).map((doc) => JSON.stringify(doc)),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc.constantFrom('{"client_name":', '{"client_name":"\\ud800","redirect_uris":["https://a.example/cb"]}', '{"__proto__":{"x":1}}', `${'['.repeat(5000)}${']'.repeat(5000)}`, '1e999999', '"\\u0000"', '{"alg":"RS256"}', '{"name":"fuzz-policy"}'),
);

type Caller = 'admin' | 'reader' | 'nobody' | 'other' | 'none' | 'garbage';

for (const db of DATABASES) {
  describe(`fuzz: management API on ${db.name}`, () => {
    let t: FuzzTarget;
    let tokens: ManageTokens;
    before(async () => {
      t = await startFuzzTarget(db);
      tokens = await manageTokens(t.server);
    });
    after(async () => {
      await t.close();
      assertNoProcessFailures();
    });

    test('random requests over every route: safe problem answers; refused or non-administrator ones change nothing', async () => {
      const templates = [...new Set(MANAGE_ROUTES.map((r) => r.path)), '/openapi.json', '/', '/nothing', '/clients/:id/nothing'];
      const param = fc.oneof(
        { weight: 3, arbitrary: fc.constant('@client') },
        { weight: 1, arbitrary: fc.constantFrom('gatehouse-manage-api', 'gatehouse-console', '00000000-0000-4000-8000-000000000000', 'RS256') },
        { weight: 2, arbitrary: hostileString().map((value) => encodeURIComponent(value.toWellFormed())) },
        { weight: 1, arbitrary: fc.constantFrom('%FF', '%', '..', '%2e%2e%2f', 'a'.repeat(250), '%00') },
      );
      // Mostly valid queries, so that requests get past validation into the use cases.
      const valid = fc.oneof(fc.constant<[string, string][]>([]), fc.string({ maxLength: 10 }).map((q): [string, string][] => [['q', q]]), fc.integer({ min: 1, max: 200 }).map((n): [string, string][] => [['limit', String(n)]]));
      const hostileQuery = fc.array(fc.tuple(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...QUERY) }, hostileString()), fc.oneof(hostileString(), fc.constantFrom('0', '1', '201', encodeCursor('x'), encodeCursor([1, 'x'])))), { maxLength: 4 });
      const query = fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: hostileQuery });
      const body = fc.option(fc.oneof({ weight: 3, arbitrary: JSON_BODIES.map((text) => ({ text, type: 'application/json' })) }, fc.tuple(hostileString(), fc.constantFrom(...CONTENT_TYPES)).map(([text, type]) => ({ text, type }))), { nil: undefined });
      const caller = fc.oneof({ weight: 4, arbitrary: fc.constant<Caller>('admin') }, fc.constantFrom<Caller>('reader', 'nobody', 'other', 'none', 'garbage'));
      await fc.assert(
        fc.asyncProperty(
          // Mostly a route as registered (its own method), so that requests reach the use cases.
          fc.oneof(
            { weight: 3, arbitrary: fc.constantFrom(...MANAGE_ROUTES.map((r) => [r.method, r.path] as const)) },
            { weight: 2, arbitrary: fc.tuple(fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'), fc.constantFrom(...templates)) },
          ),
          param,
          query,
          encoding,
          body,
          caller,
          hostileString(),
          async ([method, template], paramChoice, pairs, how, payload, who, garbage) => {
            const client = (await t.store.clients.page({ limit: 1, q: 'test' }))[0]?.clientId ?? 'none';
            // Deletes of the fixtures would leave later runs only 404s: aim them at unknown names.
            const value = paramChoice === '@client' ? (method === 'DELETE' ? 'no-such-client' : client) : paramChoice;
            const path = `${MANAGE_API_PATH}${template.replace(/:[A-Za-z_]+/g, value)}`;
            const target = targetOf(path, encodePairs(pairs, how));
            const headers: [string, string][] = [];
            const bearer: Record<Caller, string | undefined> = { admin: tokens.admin, reader: tokens.reader, nobody: tokens.nobody, other: tokens.otherAudience, none: undefined, garbage: undefined };
            if (bearer[who] !== undefined) headers.push(['authorization', `Bearer ${bearer[who]}`]);
            if (who === 'garbage') headers.push(['authorization', Buffer.from(garbage, 'utf8').toString('latin1')]);
            if (payload !== undefined) headers.push(['content-type', payload.type]);
            const before = await fingerprint(t.server);
            const response = await send(t.port, { method, target, headers, body: payload?.text });
            const context = `${method} ${target.slice(0, 200)} caller=${who} body=${payload?.text.slice(0, 100)}`;
            assertSafeResponse(response, context, [...pairs.flat(), payload?.text ?? '', path].join('\n'));
            if (response.status >= 400 && response.body.length > 0 && /^application\/problem\+json/.test(response.headers['content-type'] ?? '')) {
              const problem = JSON.parse(response.body) as { status: number; title: string; detail: string };
              assert.equal(problem.status, response.status, context);
              assert.equal(typeof problem.detail, 'string', context);
            }
            if (response.status >= 400 || who !== 'admin') {
              assert.deepEqual(await fingerprint(t.server), before, `${context} → ${response.status} ${response.body.slice(0, 200)}`);
            }
          },
        ),
        fuzzParams(120),
      );
    });
  });
}
