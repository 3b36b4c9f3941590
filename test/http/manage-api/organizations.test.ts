/**
 * `/manage/api/v1/organizations`: create, list (keyset by technical name and id, `q`), read,
 * change, delete — refused with 409 naming why while it has users or sub-organizations; roles,
 * audit with the administrator, field-naming validation, stable paging and hostile input.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AuditCapture } from '../../helpers/audit.ts';
import { addUser } from '../../helpers/back-channel.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { manageCall, manageTokens, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

for (const db of DATABASES) {
  describe(`management API organizations (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const audit = new AuditCapture();
    before(async () => {
      server = await startServer(db, { audit });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    const call = (method: string, path: string, body?: unknown, token = tokens.admin) => manageCall(server, method, path, { token, ...(body === undefined ? {} : { body }) });

    function lastEvent(event: string): Record<string, unknown> & { actor: { via: string; caller?: string } } {
      const found = audit.all().filter((e) => e.event === event);
      assert.ok(found.length > 0, `an audit event ${event}`);
      const last = found.at(-1) as unknown as Record<string, unknown> & { actor: { via: string; caller?: string } };
      assert.equal(last.actor.via, 'manage-api');
      assert.equal(last.actor.caller, tokens.adminUser.id);
      return last;
    }

    test('create, read, change, delete; each audited with the administrator; 409 naming why while it holds something', async () => {
      const parent = await call('POST', '/organizations', { technical_name: 'acme', name: 'ACME Inc.', type: 'company', attributes: { vatnumber: ['FI123'] } });
      assert.equal(parent.status, 201, parent.text);
      const parentId = parent.json.id as string;
      assert.deepEqual({ ...parent.json, created_at: 0, updated_at: 0 }, {
        id: parentId,
        name: 'ACME Inc.',
        technical_name: 'acme',
        parent_id: null,
        type: 'company',
        virtual: false,
        attributes: { vatnumber: ['FI123'] },
        created_at: 0,
        updated_at: 0,
      });
      assert.equal(lastEvent('organization.created').organizationId, parentId);
      const child = await call('POST', '/organizations', { technical_name: 'sales', parent_id: parentId });
      assert.equal(child.status, 201, child.text);
      assert.equal(child.json.name, 'sales', 'the friendly name defaults to the technical name');
      const childId = child.json.id as string;

      assert.equal((await call('GET', `/organizations/${childId}`, undefined, tokens.reader)).json.parent_id, parentId);

      const changed = await call('PATCH', `/organizations/${childId}`, { name: 'Sales dept.', attributes: { cost_center: ['42'] } });
      assert.equal(changed.status, 200, changed.text);
      assert.equal(changed.json.name, 'Sales dept.');
      assert.deepEqual(lastEvent('organization.updated').fields, ['friendlyName', 'attributes']);

      const cycle = await call('PATCH', `/organizations/${parentId}`, { parent_id: childId });
      assert.equal(cycle.status, 400, cycle.text);
      assert.equal(cycle.json.errors?.[0]?.field, 'parent_id');

      const withChild = await call('DELETE', `/organizations/${parentId}`);
      assert.equal(withChild.status, 409, withChild.text);
      assert.match(withChild.json.detail as string, /sub-organizations/);
      const user = await addUser(server.gatehouse.store, { organizationId: childId });
      const withUser = await call('DELETE', `/organizations/${childId}`);
      assert.equal(withUser.status, 409, withUser.text);
      assert.match(withUser.json.detail as string, /has users/);
      await server.gatehouse.store.users.delete(user.id);

      assert.equal((await call('DELETE', `/organizations/${childId}`)).status, 204);
      assert.equal(lastEvent('organization.deleted').organizationId, childId);
      assert.equal((await call('DELETE', `/organizations/${parentId}`)).status, 204);
      assert.equal((await call('GET', `/organizations/${parentId}`)).status, 404);
    });

    test('validation errors name the field; a technical name taken among siblings is 409 naming technical_name', async () => {
      const cases: [unknown, string][] = [
        [{ technical_name: 'x'.repeat(300) }, 'technical_name'],
        [{ parent_id: '00000000-0000-4000-8000-000000000000' }, 'parent_id'],
        [{ virtual: 'yes' }, 'virtual'],
        [{ attributes: { 'bad name': ['v'] } }, 'attributes.bad name'],
        [{ colour: 'red' }, 'colour'],
      ];
      for (const [body, field] of cases) {
        const answer = await call('POST', '/organizations', body);
        assert.equal(answer.status, 400, answer.text);
        assert.ok(answer.json.errors?.some((e) => e.field === field), `${field} in ${answer.text}`);
      }
      const bare = await manageCall(server, 'POST', '/organizations', { token: tokens.admin });
      assert.equal(bare.status, 201, `no body at all: every member has a default; ${bare.text}`);
      assert.equal(bare.json.technical_name, bare.json.id);
      assert.equal((await call('POST', '/organizations', { technical_name: 'twin' })).status, 201);
      const duplicate = await call('POST', '/organizations', { technical_name: 'twin' });
      assert.equal(duplicate.status, 409);
      assert.equal(duplicate.json.errors?.[0]?.field, 'technical_name');
      const virtualWithUsers = await call('POST', '/organizations', { technical_name: 'holds-users' });
      await addUser(server.gatehouse.store, { organizationId: virtualWithUsers.json.id as string });
      const toVirtual = await call('PATCH', `/organizations/${virtualWithUsers.json.id as string}`, { virtual: true });
      assert.equal(toVirtual.status, 400);
      assert.equal(toVirtual.json.errors?.[0]?.field, 'virtual');
    });

    test('list: technical-name order, q over technical and friendly names, stable paging under concurrent inserts', async () => {
      const ids: string[] = [];
      for (const name of ['op-b', 'op-d', 'op-f']) ids.push((await call('POST', '/organizations', { technical_name: name })).json.id as string);
      const friendly = await call('POST', '/organizations', { technical_name: 'zz-other', name: 'Known as OP-friendly' });
      const seen: string[] = [];
      const inserted: string[] = [];
      let cursor: string | null | undefined;
      for (let page = 0; page < 20; page++) {
        const answer = await call('GET', `/organizations?q=OP-&limit=2${cursor ? `&cursor=${cursor}` : ''}`, undefined, tokens.reader);
        assert.equal(answer.status, 200, answer.text);
        seen.push(...(answer.json.items ?? []).map((o) => o.id as string));
        cursor = answer.json.next_cursor;
        if (!cursor) break;
        await call('POST', '/organizations', { technical_name: `op-a${page}` });
        inserted.push((await call('POST', '/organizations', { technical_name: `op-y${page}` })).json.id as string);
      }
      assert.equal(new Set(seen).size, seen.length);
      assert.deepEqual(seen.slice(0, 3), ids);
      assert.deepEqual(new Set(seen.slice(3)), new Set([...inserted, friendly.json.id as string]));
    });

    test('a reader reads but every write is 403; a user in no administrators group 403; another audience 401', async () => {
      const org = await call('POST', '/organizations', { technical_name: 'roles-org' });
      const id = org.json.id as string;
      for (const path of ['/organizations', `/organizations/${id}`]) {
        assert.equal((await call('GET', path, undefined, tokens.reader)).status, 200, path);
        assert.equal((await call('GET', path, undefined, tokens.nobody)).status, 403, path);
        assert.equal((await call('GET', path, undefined, tokens.otherAudience)).status, 401, path);
      }
      const writes: [string, string, unknown?][] = [
        ['POST', '/organizations', { technical_name: 'by-reader' }],
        ['PATCH', `/organizations/${id}`, { name: 'Renamed' }],
        ['DELETE', `/organizations/${id}`],
      ];
      for (const [method, path, body] of writes) {
        assert.equal((await call(method, path, body, tokens.reader)).status, 403, `${method} ${path}`);
        assert.equal((await call(method, path, body, tokens.nobody)).status, 403, `${method} ${path}`);
        assert.equal((await call(method, path, body, tokens.otherAudience)).status, 401, `${method} ${path}`);
      }
      assert.equal((await server.gatehouse.store.organizations.get(id))?.friendlyName, 'roles-org');
    });

    test('hostile input is a 4xx, never a 5xx', async () => {
      const answers = [
        await call('GET', '/organizations/not-a-uuid'),
        await call('GET', '/organizations/00000000-0000-4000-8000-000000000000'),
        await call('PATCH', '/organizations/00000000-0000-4000-8000-000000000000', { name: 'x' }),
        await call('DELETE', '/organizations/00000000-0000-4000-8000-000000000000'),
        await call('GET', `/organizations?cursor=${Buffer.from('{"t":1,"i":2}').toString('base64url')}`),
        await call('GET', `/organizations?cursor=${Buffer.from('null').toString('base64url')}`),
        await call('POST', '/organizations', { parent_id: "' or 1=1 --" }),
        await call('POST', '/organizations', { attributes: { a: Array.from({ length: 150 }, () => 'v') } }),
        await call('PATCH', '/organizations/00000000-0000-4000-8000-000000000000', {}),
      ];
      for (const answer of answers) assert.ok(answer.status >= 400 && answer.status < 500, `${answer.status} ${answer.text.slice(0, 200)}`);
    });
  });
}
