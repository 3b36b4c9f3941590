/**
 * Hostile input: every malformed request is a 4xx problem document naming what was wrong, never
 * a 5xx (the test server fails its close() on any 5xx) and never internals in the body.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeCursor } from '../../../src/http/manage-api/pagination.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { manageCall, manageTokens, type ManageResponse, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

function assertProblem(answer: ManageResponse, status: number, field?: string): void {
  assert.equal(answer.status, status, answer.text);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(answer.json.status, status);
  assert.ok(!/\bat .+:\d+:\d+|stack|node_modules|SQLITE|syntax error at|relation "/i.test(answer.text), `no internals in ${answer.text}`);
  if (field !== undefined) assert.ok(answer.json.errors?.some((e) => e.field === field), `${field} named in ${answer.text}`);
}

for (const db of DATABASES) {
  describe(`management API: hostile input (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    before(async () => {
      server = await startServer(db);
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    const post = (body: string, contentType = 'application/json') => manageCall(server, 'POST', '/clients', { token: tokens.admin, body, contentType });

    test('malformed JSON, an empty JSON body, a non-object body: 400', async () => {
      assertProblem(await post('{"client_name": '), 400);
      assertProblem(await post('{"a":1}}'), 400);
      assertProblem(await post(''), 400);
      assertProblem(await post('[1,2]'), 400, 'body');
      assertProblem(await post('"text"'), 400, 'body');
      assertProblem(await post('null'), 400);
    });

    test('a form or text body: 415', async () => {
      assertProblem(await post('client_name=x', 'application/x-www-form-urlencoded'), 415);
      assertProblem(await post('client_name', 'text/plain'), 415);
      assertProblem(await post('<a/>', 'application/xml'), 415);
    });

    test('a body over 256 KiB: 413', async () => {
      assertProblem(await post(JSON.stringify({ client_name: 'x'.repeat(300 * 1024) })), 413);
    });

    test('wrong types and unknown members name their fields; __proto__ is not special', async () => {
      assertProblem(await post(JSON.stringify({ client_name: 5, redirect_uris: 'https://a.example/cb' })), 400, 'client_name');
      const both = await post(JSON.stringify({ client_name: 5, redirect_uris: 'https://a.example/cb' }));
      assert.ok(both.json.errors!.some((e) => e.field === 'redirect_uris'), 'every field, not just the first');
      assertProblem(await post(JSON.stringify({ client_name: 'x', refresh_tokens: 'true' })), 400, 'refresh_tokens');
      assertProblem(await post('{"client_name":"x","redirect_uris":["https://a.example/cb"],"__proto__":{"admin":true}}'), 400);
      assertProblem(await manageCall(server, 'POST', '/keys/rotate', { token: tokens.admin, body: { alg: 'RS256', extra: 1 } }), 400, 'extra');
      assertProblem(await manageCall(server, 'POST', '/policies', { token: tokens.admin, body: { name: 'p', claims: 'all' } }), 400, 'claims');
    });

    test('deep nesting and many members stay 4xx', async () => {
      const deep = '{"client_name":"x","aud":' + '['.repeat(5000) + ']'.repeat(5000) + '}';
      assertProblem(await post(deep), 400);
      const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i]));
      assertProblem(await post(JSON.stringify(many)), 400);
    });

    test('NUL characters in a body, a query or a path: 400 naming where', async () => {
      assertProblem(await post(JSON.stringify({ client_name: 'a\u0000b', redirect_uris: ['https://a.example/cb'] })), 400, 'client_name');
      assertProblem(await manageCall(server, 'GET', '/clients?q=a%00b', { token: tokens.admin }), 400, 'q');
      assertProblem(await manageCall(server, 'GET', '/clients/a%00b', { token: tokens.admin }), 400, 'id');
    });

    test('invalid UTF-8 and lone surrogates are never a server error', async () => {
      for (const path of ['/clients/%ED%A0%80', '/clients?q=%ED%A0%80', '/clients?q=%FF', '/policies/%C0%AF']) {
        const answer = await manageCall(server, 'GET', path, { token: tokens.admin });
        assert.ok(answer.status < 500, `${path}: ${answer.status}`);
      }
      const created = await post('{"client_name":"\\ud800 shop","redirect_uris":["https://a.example/cb"]}');
      assert.ok(created.status < 500, created.text);
    });

    test('bad limits and cursors: 400 naming them', async () => {
      for (const query of ['limit=0', 'limit=201', 'limit=abc', 'limit=1.5', 'limit=1&limit=2', 'limit=-1']) assertProblem(await manageCall(server, 'GET', `/clients?${query}`, { token: tokens.admin }), 400, 'limit');
      for (const cursor of ['!!!', 'bm90IGpzb24', encodeCursor({ id: 1 }), encodeCursor(''), encodeCursor(['x']), encodeCursor('a\u0000b'), encodeCursor([1, 'a\u0000b']), 'A'.repeat(2000)]) {
        assertProblem(await manageCall(server, 'GET', `/clients?cursor=${cursor}`, { token: tokens.admin }), 400, 'cursor');
        assertProblem(await manageCall(server, 'GET', `/keys?cursor=${cursor}`, { token: tokens.admin }), 400, 'cursor');
      }
      assertProblem(await manageCall(server, 'GET', '/clients?unknown=1', { token: tokens.admin }), 400, 'unknown');
      assertProblem(await manageCall(server, 'GET', `/clients?q=${'x'.repeat(300)}`, { token: tokens.admin }), 400, 'q');
    });

    test('over-long path parameters, odd methods and paths: 4xx', async () => {
      // The router refuses an over-long segment before any route group (414, the server-wide limit).
      assert.equal((await manageCall(server, 'GET', `/clients/${'x'.repeat(300)}`, { token: tokens.admin })).status, 414);
      assertProblem(await manageCall(server, 'GET', `/policies/${'x'.repeat(150)}`, { token: tokens.admin }), 400, 'name');
      assertProblem(await manageCall(server, 'PUT', '/clients', { token: tokens.admin, body: {} }), 405);
      assertProblem(await manageCall(server, 'GET', '/clients/x/nothing', { token: tokens.admin }), 404);
    });
  });
}
