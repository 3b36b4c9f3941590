/**
 * Clients through the management API: the registration use cases over HTTP, with the CLI's audit
 * events naming the administrator, the secret shown once, keyset pages, export and import, and the
 * API's and the console's own clients protected from deletion and deactivation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CONSOLE_CLIENT_ID, MANAGE_API_CLIENT_ID } from '../../../src/manage/management-clients.ts';
import { AuditCapture } from '../../helpers/audit.ts';
import { basic, postForm } from '../../helpers/back-channel.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { manageCall, manageTokens, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

const DOCUMENT = { client_name: 'Web shop', redirect_uris: ['https://shop.example/cb'] };

for (const db of DATABASES) {
  describe(`management API: clients (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const audit = new AuditCapture();
    before(async () => {
      server = await startServer(db, { audit });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    /** `client.created` shares its union member with `client.updated`, which `audit.of` cannot narrow. */
    const createdEvents = () => audit.all().filter((e) => e.event === 'client.created') as unknown as { clientId: string; actor: unknown }[];
    const adminActor = () => ({ via: 'manage-api', caller: tokens.adminUser.id, clientId: CONSOLE_CLIENT_ID });

    test('register: 201 with the secret once; the secret works at the token endpoint; audited with the administrator', async () => {
      audit.clear();
      const created = await manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { ...DOCUMENT, grant_types: ['authorization_code', 'client_credentials'] } });
      assert.equal(created.status, 201, created.text);
      const id = created.json.client_id as string;
      assert.equal(typeof created.json.client_secret, 'string');
      assert.deepEqual(Object.keys(created.json).slice(0, 2), ['client_id', 'client_secret']);
      assert.equal(created.json.client_name, 'Web shop');
      assert.equal(created.json.active, true);
      assert.match(created.json.updated_at as string, /^\d{4}-\d\d-\d\dT/);
      const token = await postForm(`${server.issuer}/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic(id, created.json.client_secret as string) });
      assert.equal(token.status, 200, JSON.stringify(token.body));
      const shown = await manageCall(server, 'GET', `/clients/${id}`, { token: tokens.reader });
      assert.equal(shown.status, 200);
      assert.equal(shown.json.client_secret, undefined, 'never shown again');
      assert.ok(!/secret_hash|secretHash/.test(shown.text));
      assert.deepEqual(createdEvents().map((e) => ({ clientId: e.clientId, actor: e.actor })), [{ clientId: id, actor: adminActor() }]);
    });

    test('a metadata error names its field; a wrong type names the element', async () => {
      const bad = await manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { client_name: 'x', redirect_uris: ['not a uri'] } });
      assert.equal(bad.status, 400, bad.text);
      assert.equal(bad.json.errors![0]!.field, 'redirect_uris');
      const typed = await manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { client_name: 'x', redirect_uris: ['https://a.example/cb', 5] } });
      assert.equal(typed.status, 400);
      assert.deepEqual(typed.json.errors!.map((e) => e.field), ['redirect_uris[1]']);
      const unknown = await manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { ...DOCUMENT, favourite_colour: 'blue' } });
      assert.equal(unknown.status, 400);
      assert.equal(unknown.json.errors![0]!.field, 'favourite_colour');
      const none = await manageCall(server, 'GET', '/clients/no-such-client', { token: tokens.admin });
      assert.equal(none.status, 404);
    });

    test('PATCH changes members, null removes one; activate, deactivate, rotate, delete: each audited', async () => {
      const id = (await manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { ...DOCUMENT, scope: 'openid profile' } })).json.client_id as string;
      audit.clear();
      const patched = await manageCall(server, 'PATCH', `/clients/${id}`, { token: tokens.admin, body: { client_name: 'Renamed shop', scope: null } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.json.client_name, 'Renamed shop');
      assert.equal(patched.json.scope, undefined);
      assert.equal(patched.json.client_secret, undefined, 'no new secret when none was needed');
      const off = await manageCall(server, 'POST', `/clients/${id}/deactivate`, { token: tokens.admin });
      assert.equal(off.status, 200);
      assert.equal(off.json.active, false);
      const on = await manageCall(server, 'POST', `/clients/${id}/activate`, { token: tokens.admin });
      assert.equal(on.json.active, true);
      const rotated = await manageCall(server, 'POST', `/clients/${id}/secret`, { token: tokens.admin });
      assert.equal(rotated.status, 200);
      assert.deepEqual(Object.keys(rotated.json), ['client_id', 'client_secret']);
      const token = await postForm(`${server.issuer}/oauth2/token`, { grant_type: 'authorization_code', code: 'x', redirect_uri: DOCUMENT.redirect_uris[0]! }, { authorization: basic(id, rotated.json.client_secret as string) });
      assert.equal(token.body.error, 'invalid_grant', 'the new secret authenticates the client');
      const deleted = await manageCall(server, 'DELETE', `/clients/${id}`, { token: tokens.admin });
      assert.equal(deleted.status, 204);
      assert.equal(deleted.text, '');
      assert.equal((await manageCall(server, 'GET', `/clients/${id}`, { token: tokens.admin })).status, 404);
      const events = audit.all().map((e) => [e.event, (e as { active?: boolean }).active, (e as { actor?: unknown }).actor]);
      assert.deepEqual(events, [
        ['client.updated', undefined, adminActor()],
        ['client.status_changed', false, adminActor()],
        ['client.status_changed', true, adminActor()],
        ['client.secret_rotated', undefined, adminActor()],
        ['client.deleted', undefined, adminActor()],
      ]);
    });

    test('default_acr_values and default_max_age (issue 24): registered, echoed, changed and removed by PATCH; a bad one names its field', async () => {
      const created = await manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { ...DOCUMENT, default_acr_values: ['urn:a', 'phr'], default_max_age: 600 } });
      assert.deepEqual([created.status, created.json.default_acr_values, created.json.default_max_age], [201, ['urn:a', 'phr'], 600], created.text);
      const id = created.json.client_id as string;
      const patched = await manageCall(server, 'PATCH', `/clients/${id}`, { token: tokens.admin, body: { default_acr_values: null, default_max_age: 0 } });
      assert.deepEqual([patched.status, patched.json.default_acr_values, patched.json.default_max_age], [200, undefined, 0]);
      const bad = await manageCall(server, 'PATCH', `/clients/${id}`, { token: tokens.admin, body: { default_max_age: -5 } });
      assert.deepEqual([bad.status, bad.json.errors?.[0]?.field], [400, 'default_max_age']);
    });

    test('export and import: the document registers the same client, keeping its client_id when free', async () => {
      const id = (await manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { ...DOCUMENT, client_name: 'Exported' } })).json.client_id as string;
      const exported = await manageCall(server, 'GET', `/clients/${id}/metadata`, { token: tokens.reader });
      assert.equal(exported.status, 200);
      assert.equal(exported.json.client_id, id);
      assert.equal(exported.json.created_at, undefined);
      assert.equal(exported.json.client_secret, undefined);
      const again = await manageCall(server, 'POST', '/clients/import', { token: tokens.admin, body: exported.json });
      assert.equal(again.status, 409, 'the client_id is taken');
      assert.equal(again.json.errors![0]!.field, 'client_id');
      // A user's id, in any letter case, is no client_id: the client's tokens would carry it as sub (issue 22, item 4).
      for (const userId of [tokens.adminUser.id, tokens.adminUser.id.toUpperCase()]) {
        const asUser = await manageCall(server, 'POST', '/clients/import', { token: tokens.admin, body: { ...exported.json, client_id: userId } });
        assert.equal(asUser.status, 409, asUser.text);
        const message = `the client_id ${JSON.stringify(userId)} is the id of a user: a client's tokens would name that user as their subject (sub)`;
        assert.deepEqual([asUser.json.detail, asUser.json.errors], [message, [{ field: 'client_id', message }]]);
        assert.equal(await server.gatehouse.store.clients.get(userId), undefined);
      }
      const copy = { ...exported.json, client_id: `${id}-copy` };
      audit.clear();
      const imported = await manageCall(server, 'POST', '/clients/import', { token: tokens.admin, body: copy });
      assert.equal(imported.status, 201, imported.text);
      assert.equal(imported.json.client_id, `${id}-copy`);
      assert.equal(typeof imported.json.client_secret, 'string');
      assert.equal(imported.json.client_name, 'Exported');
      assert.deepEqual(createdEvents().map((e) => e.clientId), [`${id}-copy`]);
      const { client_id: _id, ...anonymous } = exported.json;
      const generated = await manageCall(server, 'POST', '/clients/import', { token: tokens.admin, body: anonymous });
      assert.equal(generated.status, 201);
      assert.notEqual(generated.json.client_id, id);
    });

    test('PUT metadata replaces the registration: members left out are removed; the client_id cannot change; audited', async () => {
      const id = (await manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { ...DOCUMENT, scope: 'openid profile', logo_uri: 'https://shop.example/logo.png' } })).json.client_id as string;
      const { client_id: _id, scope: _scope, logo_uri: _logo, ...kept } = (await manageCall(server, 'GET', `/clients/${id}/metadata`, { token: tokens.admin })).json;
      const document = { ...kept, client_name: 'Replaced', 'client_name#sv': 'Ersatt' };
      audit.clear();
      const replaced = await manageCall(server, 'PUT', `/clients/${id}/metadata`, { token: tokens.admin, body: { client_id: id, ...document } });
      assert.equal(replaced.status, 200, replaced.text);
      assert.deepEqual((await manageCall(server, 'GET', `/clients/${id}/metadata`, { token: tokens.reader })).json, { client_id: id, ...document });
      assert.deepEqual(audit.all().map((e) => [e.event, (e as { actor?: unknown }).actor]), [['client.updated', adminActor()]]);

      const moved = await manageCall(server, 'PUT', `/clients/${id}/metadata`, { token: tokens.admin, body: { ...document, client_id: 'another-id' } });
      assert.equal(moved.status, 400);
      assert.deepEqual(moved.json.errors, [{ field: 'client_id', message: 'cannot change' }]);
      const invalid = await manageCall(server, 'PUT', `/clients/${id}/metadata`, { token: tokens.admin, body: { ...document, redirect_uris: ['not a uri'] } });
      assert.equal(invalid.status, 400);
      assert.equal(invalid.json.errors![0]!.field, 'redirect_uris');
      assert.equal((await manageCall(server, 'PUT', `/clients/${id}/metadata`, { token: tokens.reader, body: document })).status, 403);
      assert.equal((await manageCall(server, 'PUT', `/clients/${CONSOLE_CLIENT_ID}/metadata`, { token: tokens.admin, body: { ...document, active: false } })).status, 409);
      assert.equal((await manageCall(server, 'PUT', '/clients/no-such-client/metadata', { token: tokens.admin, body: document })).status, 404);
      assert.deepEqual((await manageCall(server, 'GET', `/clients/${id}/metadata`, { token: tokens.reader })).json, { client_id: id, ...document }, 'nothing refused was written');
    });

    test("the API's and the console's clients cannot be deleted or deactivated here (409)", async () => {
      for (const id of [MANAGE_API_CLIENT_ID, CONSOLE_CLIENT_ID]) {
        for (const [method, path, body] of [['DELETE', `/clients/${id}`], ['POST', `/clients/${id}/deactivate`], ['PATCH', `/clients/${id}`, { active: false }]] as const) {
          const answer = await manageCall(server, method, path, { token: tokens.admin, ...(body ? { body } : {}) });
          assert.equal(answer.status, 409, `${method} ${path}: ${answer.text}`);
        }
        assert.equal((await server.gatehouse.store.clients.get(id))!.active, true);
      }
      assert.equal((await manageCall(server, 'GET', '/me', { token: tokens.admin })).status, 200);
    });

    test('list: keyset pages by client_id, q searches client_id and client_name case-insensitively', async () => {
      const marker = `Zebra-${Date.now()}`;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { ...DOCUMENT, client_name: `${marker} ${i}` } })).json.client_id as string);
      const seen: string[] = [];
      let cursor: string | null | undefined;
      do {
        const page = await manageCall(server, 'GET', `/clients?limit=2&q=${marker.toLowerCase()}${cursor ? `&cursor=${cursor}` : ''}`, { token: tokens.reader });
        assert.equal(page.status, 200, page.text);
        assert.ok(page.json.items!.length <= 2);
        seen.push(...page.json.items!.map((c) => c.client_id as string));
        cursor = page.json.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, [...ids].sort());
      const literal = await manageCall(server, 'GET', `/clients?q=${encodeURIComponent('%')}`, { token: tokens.admin });
      assert.deepEqual(literal.json.items, [], 'LIKE wildcards match literally');
      const all = await manageCall(server, 'GET', '/clients?limit=200', { token: tokens.admin });
      const listed = all.json.items!.map((c) => c.client_id as string);
      assert.deepEqual(listed, [...listed].sort());
      assert.ok(listed.includes(MANAGE_API_CLIENT_ID));
    });

    test('paging is stable under concurrent inserts: every client that existed is seen exactly once', async () => {
      const before = new Set((await server.gatehouse.store.clients.list()).map((c) => c.clientId));
      const seen: string[] = [];
      let cursor: string | null | undefined;
      let round = 0;
      do {
        const [page] = await Promise.all([
          manageCall(server, 'GET', `/clients?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { token: tokens.admin }),
          ...Array.from({ length: 3 }, (_, i) => manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { ...DOCUMENT, client_name: `concurrent ${round}-${i}` } })),
        ]);
        assert.equal(page!.status, 200);
        seen.push(...page!.json.items!.map((c) => c.client_id as string));
        cursor = page!.json.next_cursor;
        round++;
      } while (cursor && round < 200);
      assert.equal(new Set(seen).size, seen.length, 'no client twice');
      for (const id of before) assert.ok(seen.includes(id), `${id} seen`);
    });

    test('a client_credentials token of an automation client is an administrator', async () => {
      audit.clear();
      const created = await manageCall(server, 'POST', '/clients', { token: tokens.automation, body: DOCUMENT });
      assert.equal(created.status, 201);
      assert.deepEqual(createdEvents()[0]!.actor, { via: 'manage-api', clientId: tokens.automationClient.clientId });
    });
  });
}
