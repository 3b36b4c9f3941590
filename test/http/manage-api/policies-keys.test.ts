/**
 * Policies and signing keys through the management API: the CLI's use cases and audit events, a
 * policy in use refused with the clients named, keys without any private material.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CONSOLE_CLIENT_ID } from '../../../src/manage/management-clients.ts';
import { AuditCapture } from '../../helpers/audit.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { manageCall, manageTokens, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

for (const db of DATABASES) {
  describe(`management API: policies and keys (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const audit = new AuditCapture();
    before(async () => {
      server = await startServer(db, { audit });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    const actor = () => ({ via: 'manage-api', caller: tokens.adminUser.id, clientId: CONSOLE_CLIENT_ID });

    test('create, get, replace, delete a policy; each change audited with the administrator', async () => {
      audit.clear();
      const created = await manageCall(server, 'POST', '/policies', { token: tokens.admin, body: { name: 'staff-only', access: { groups: ['Staff'] } } });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.json.name, 'staff-only');
      assert.equal(created.json.version, 1);
      const dup = await manageCall(server, 'POST', '/policies', { token: tokens.admin, body: { name: 'staff-only' } });
      assert.equal(dup.status, 409);
      assert.equal(dup.json.errors![0]!.field, 'name');
      const shown = await manageCall(server, 'GET', '/policies/staff-only', { token: tokens.reader });
      assert.equal(shown.status, 200);
      assert.deepEqual(shown.json.clients, []);
      const replaced = await manageCall(server, 'PUT', '/policies/staff-only', { token: tokens.admin, body: { access: { groups: ['Staff', 'Contractors'] } } });
      assert.equal(replaced.status, 200, replaced.text);
      assert.equal(replaced.json.version, 2);
      const renamed = await manageCall(server, 'PUT', '/policies/staff-only', { token: tokens.admin, body: { name: 'other' } });
      assert.equal(renamed.status, 400);
      assert.equal(renamed.json.errors![0]!.field, 'name');
      const bad = await manageCall(server, 'POST', '/policies', { token: tokens.admin, body: { name: 'claims-bad', claims: [{ claim: 'sub', from: 'user.id' }] } });
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.json.errors![0]!.field, /^claims\[0\]/);
      const deleted = await manageCall(server, 'DELETE', '/policies/staff-only', { token: tokens.admin });
      assert.equal(deleted.status, 204);
      assert.equal((await manageCall(server, 'GET', '/policies/staff-only', { token: tokens.admin })).status, 404);
      assert.deepEqual(
        audit.all().map((e) => [e.event, (e as { version?: number }).version, (e as { actor?: unknown }).actor]),
        [
          ['policy.created', 1, actor()],
          ['policy.updated', 2, actor()],
          ['policy.deleted', undefined, actor()],
        ],
      );
    });

    test('deleting a policy in use: 409 naming the clients', async () => {
      await manageCall(server, 'POST', '/policies', { token: tokens.admin, body: { name: 'in-use' } });
      const client = await manageCall(server, 'POST', '/clients', { token: tokens.admin, body: { client_name: 'uses it', redirect_uris: ['https://a.example/cb'], authorization_policy: 'in-use' } });
      assert.equal(client.status, 201, client.text);
      const refused = await manageCall(server, 'DELETE', '/policies/in-use', { token: tokens.admin });
      assert.equal(refused.status, 409);
      assert.match(refused.json.detail as string, new RegExp(client.json.client_id as string));
    });

    test('policies list in name order, keyset-paged, q by name', async () => {
      for (const name of ['pl-c', 'pl-a', 'pl-b']) await manageCall(server, 'POST', '/policies', { token: tokens.admin, body: { name } });
      const first = await manageCall(server, 'GET', '/policies?q=PL-&limit=2', { token: tokens.reader });
      assert.deepEqual(first.json.items!.map((p) => p.name), ['pl-a', 'pl-b']);
      const second = await manageCall(server, 'GET', `/policies?q=pl-&limit=2&cursor=${first.json.next_cursor}`, { token: tokens.reader });
      assert.deepEqual(second.json.items!.map((p) => p.name), ['pl-c']);
      assert.equal(second.json.next_cursor, null);
    });

    test('keys: public facts only; rotation makes a next key, audited', async () => {
      const listed = await manageCall(server, 'GET', '/keys', { token: tokens.reader });
      assert.equal(listed.status, 200, listed.text);
      assert.ok(listed.json.items!.length >= 1);
      assert.ok(!/"d"|private|"p"|"q"|"dp"/.test(listed.text), 'no private members');
      const rs256 = listed.json.items!.filter((k) => k.alg === 'RS256');
      assert.deepEqual(rs256.map((k) => k.status), ['active']);
      audit.clear();
      const rotated = await manageCall(server, 'POST', '/keys/rotate', { token: tokens.admin, body: { alg: 'RS256' } });
      assert.equal(rotated.status, 201, rotated.text);
      assert.equal(rotated.json.status, 'next');
      assert.equal(typeof rotated.json.activates_at, 'string');
      assert.deepEqual(audit.of('key.rotated').map((e) => [e.kid, e.alg, e.actor]), [[rotated.json.kid, 'RS256', actor()]]);
      const after = await manageCall(server, 'GET', '/keys', { token: tokens.admin });
      const statuses = after.json.items!.filter((k) => k.alg === 'RS256').map((k) => [k.kid, k.status]);
      assert.deepEqual(statuses[0], [rotated.json.kid, 'next'], 'newest first');
      assert.equal(statuses[1]![1], 'active', 'the previous key signs until the new one activates');
      const noBody = await manageCall(server, 'POST', '/keys/rotate', { token: tokens.admin });
      assert.equal(noBody.status, 201, `no body rotates RS256: ${noBody.text}`);
      const badAlg = await manageCall(server, 'POST', '/keys/rotate', { token: tokens.admin, body: { alg: 'none' } });
      assert.equal(badAlg.status, 400);
      assert.equal(badAlg.json.errors![0]!.field, 'alg');
      const paged = await manageCall(server, 'GET', '/keys?limit=1', { token: tokens.admin });
      const next = await manageCall(server, 'GET', `/keys?limit=1&cursor=${paged.json.next_cursor}`, { token: tokens.admin });
      assert.notEqual(next.json.items![0]!.kid, paged.json.items![0]!.kid);
    });
  });
}
