/**
 * The role matrix over EVERY route of the registry (MANAGE_ROUTES, so routes added later are
 * covered too): no token → 401 with a Bearer challenge; a token for another audience → 401
 * invalid_token; an enabled user in neither group → 403; a reader may call every GET but no
 * change (403, before the body is even read), and leaves no audit event.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MANAGE_ROUTES } from '../../../src/http/manage-api/routes/index.ts';
import { AuditCapture } from '../../helpers/audit.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { manageCall, manageTokens, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

/** A concrete path for a route: each parameter a value that names nothing. */
const concrete = (path: string) => path.replace(/:([A-Za-z_]+)/g, '00000000-0000-4000-8000-000000000000');

for (const db of DATABASES) {
  describe(`management API: who may call each route (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const audit = new AuditCapture();
    before(async () => {
      server = await startServer(db, { audit });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    test('the registry has the routes of this part', () => {
      const have = new Set(MANAGE_ROUTES.map((r) => `${r.method} ${r.path}`));
      for (const route of ['GET /me', 'GET /clients', 'POST /clients', 'POST /clients/import', 'GET /policies', 'POST /keys/rotate']) assert.ok(have.has(route), route);
      for (const route of MANAGE_ROUTES) assert.equal(route.access, route.method === 'GET' ? 'read' : 'write', `${route.method} ${route.path}: GET reads, everything else writes`);
    });

    test('no token: 401 with a Bearer challenge, on every route', async () => {
      for (const route of MANAGE_ROUTES) {
        const answer = await manageCall(server, route.method, concrete(route.path), { body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
        assert.equal(answer.status, 401, `${route.method} ${route.path}`);
        assert.equal(answer.headers.get('www-authenticate'), 'Bearer realm="gatehouse management API"');
        assert.equal(answer.json.status, 401);
      }
    });

    test('a token for another audience: 401 invalid_token, on every route', async () => {
      for (const route of MANAGE_ROUTES) {
        const answer = await manageCall(server, route.method, concrete(route.path), { token: tokens.otherAudience });
        assert.equal(answer.status, 401, `${route.method} ${route.path}`);
        assert.match(answer.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      }
    });

    test('an enabled user in neither group: 403, on every route', async () => {
      for (const route of MANAGE_ROUTES) {
        const answer = await manageCall(server, route.method, concrete(route.path), { token: tokens.nobody });
        assert.equal(answer.status, 403, `${route.method} ${route.path}`);
        assert.equal(answer.headers.get('www-authenticate'), null);
      }
    });

    test('a reader: every GET answers (not 401/403), every change is 403 and leaves no audit event', async () => {
      audit.clear();
      for (const route of MANAGE_ROUTES) {
        const answer = await manageCall(server, route.method, concrete(route.path), { token: tokens.reader, body: route.method === 'GET' || route.method === 'DELETE' ? undefined : { anything: true } });
        if (route.method === 'GET') assert.ok(answer.status !== 401 && answer.status !== 403, `${route.method} ${route.path}: ${answer.status}`);
        else {
          assert.equal(answer.status, 403, `${route.method} ${route.path}`);
          assert.match(answer.json.detail as string, /administrator/);
        }
      }
      assert.deepEqual(audit.all(), []);
    });

    test('every answer is no-store, errors are problem documents', async () => {
      for (const route of MANAGE_ROUTES) {
        const answer = await manageCall(server, route.method, concrete(route.path), { token: tokens.nobody });
        assert.equal(answer.headers.get('cache-control'), 'no-store');
        assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.deepEqual(Object.keys(answer.json).sort(), ['detail', 'status', 'title', 'type']);
      }
    });
  });
}
