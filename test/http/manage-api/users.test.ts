/**
 * `/manage/api/v1/users`: every route's success, who may call it (reader reads only, a user in no
 * administrators group 403, another audience 401), the audit event of every write naming the
 * administrator, field-naming validation errors, stable keyset paging under concurrent inserts,
 * and hostile input answered 4xx.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES } from '../../helpers/databases.ts';
import { AuditCapture } from '../../helpers/audit.ts';
import { addManager, manageCall, manageTokens, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';
import { addUser } from '../../helpers/back-channel.ts';

for (const db of DATABASES) {
  describe(`management API users (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const audit = new AuditCapture();
    before(async () => {
      server = await startServer(db, { audit });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    const call = (method: string, path: string, body?: unknown, token = tokens.admin) => manageCall(server, method, path, { token, ...(body === undefined ? {} : { body }) });

    /** The last audit event of that kind, which must name the administrator through the management API. */
    function auditedByAdmin(event: string): Record<string, unknown> {
      const found = audit.all().filter((e) => e.event === event);
      assert.ok(found.length > 0, `an audit event ${event}`);
      const last = found[found.length - 1] as unknown as Record<string, unknown> & { actor: Record<string, unknown> };
      assert.equal(last.actor.via, 'manage-api');
      assert.equal(last.actor.caller, tokens.adminUser.id);
      return last;
    }

    test('create, read, change, set the password, disable, enable and delete a user, each audited with the administrator', async () => {
      const created = await call('POST', '/users', { username: 'Mgmt-Alice', password: 'correct horse battery', email: 'alice@example.com', given_name: 'Alice', family_name: 'Liddell', attributes: { team: ['blue'] } });
      assert.equal(created.status, 201, created.text);
      const id = created.json.id as string;
      assert.equal(created.json.username, 'Mgmt-Alice');
      assert.equal(created.headers.get('location'), `/manage/api/v1/users/${id}`);
      assert.equal(created.json.name, 'Alice Liddell');
      assert.equal(created.json.status, 'enabled');
      assert.deepEqual(created.json.groups, []);
      assert.deepEqual(created.json.attributes, { team: ['blue'] });
      assert.equal(auditedByAdmin('user.created').userId, id);
      assert.equal(created.text.includes('correct horse'), false, 'the password is never echoed');

      const group = await call('POST', '/groups', { name: 'mgmt-users-readers' });
      assert.equal(group.status, 201, group.text);
      assert.equal((await call('PUT', `/groups/mgmt-users-readers/members/${id}`)).status, 201);
      const read = await call('GET', `/users/${id}`, undefined, tokens.reader);
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.json.groups, ['mgmt-users-readers']);

      const patched = await call('PATCH', `/users/${id}`, { email: null, given_name: 'Alicia', attributes: { team: null, floor: ['3'] } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.json.email, null);
      assert.equal(patched.json.given_name, 'Alicia');
      assert.deepEqual(patched.json.attributes, { floor: ['3'] });
      assert.deepEqual(auditedByAdmin('user.updated').fields, ['email', 'givenName', 'attributes']);

      const password = await call('PUT', `/users/${id}/password`, { password: 'another long secret' });
      assert.equal(password.status, 204, password.text);
      assert.equal(auditedByAdmin('user.password_changed').userId, id);
      assert.equal(audit.lines.some((line) => line.includes('another long secret')), false);

      const disabled = await call('POST', `/users/${id}/disable`);
      assert.equal(disabled.status, 200, disabled.text);
      assert.equal(disabled.json.status, 'disabled');
      assert.equal(auditedByAdmin('user.status_changed').status, 'disabled');
      const enabled = await call('POST', `/users/${id}/enable`);
      assert.equal(enabled.json.status, 'enabled');
      assert.equal(auditedByAdmin('user.status_changed').status, 'enabled');

      const deleted = await call('DELETE', `/users/${id}`);
      assert.equal(deleted.status, 204, deleted.text);
      assert.equal(auditedByAdmin('user.deleted').userId, id);
      assert.equal((await call('GET', `/users/${id}`)).status, 404);
    });

    test('validation errors name the field; duplicates are 409 naming username', async () => {
      const cases: [unknown, string][] = [
        [{ username: 'x-bad-mail', email: 'not an address' }, 'email'],
        [{}, 'username'],
        [{ username: '   ' }, 'username'],
        [{ username: 'x-short', password: 'short' }, 'password'],
        [{ username: 'x-status', status: 'root' }, 'status'],
        [{ username: 'x-extra', is_admin: true }, 'is_admin'],
        [{ username: 'x-group', groups: ['no such group'] }, 'groups'],
        [{ username: 'x-org', organization_id: '00000000-0000-4000-8000-000000000000' }, 'organization_id'],
        [{ username: 'x-attr', attributes: { '1bad': ['v'] } }, 'attributes.1bad'],
        [{ username: 'x-ctrl\u0007' }, 'username'],
        [{ username: 'x'.repeat(300) }, 'username'],
      ];
      for (const [body, field] of cases) {
        const answer = await call('POST', '/users', body);
        assert.equal(answer.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${answer.text}`);
        assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.ok(answer.json.errors?.some((e) => e.field === field), `${field} named in ${answer.text}`);
      }
      assert.equal((await call('POST', '/users', { username: 'mgmt-dup' })).status, 201);
      const duplicate = await call('POST', '/users', { username: 'MGMT-DUP' });
      assert.equal(duplicate.status, 409, duplicate.text);
      assert.equal(duplicate.json.errors?.[0]?.field, 'username');
      const badPatch = await call('PATCH', `/users/${tokens.nobodyUser.id}`, { email: 'nope' });
      assert.equal(badPatch.status, 400);
      assert.equal(badPatch.json.errors?.[0]?.field, 'email');
      assert.equal((await call('PATCH', `/users/${tokens.nobodyUser.id}`, {})).status, 400, 'an empty change');
      const badPassword = await call('PUT', `/users/${tokens.nobodyUser.id}/password`, { password: 'short' });
      assert.equal(badPassword.status, 400);
      assert.equal(badPassword.json.errors?.[0]?.field, 'password');
    });

    test('a reader reads but every write is 403; a user in no administrators group 403; another audience 401', async () => {
      const target = await addUser(server.gatehouse.store);
      const reads = ['/users', `/users/${target.id}`];
      const writes: [string, string, unknown?][] = [
        ['POST', '/users', { username: 'reader-made' }],
        ['PATCH', `/users/${target.id}`, { given_name: 'Eve' }],
        ['DELETE', `/users/${target.id}`],
        ['PUT', `/users/${target.id}/password`, { password: 'a long enough one' }],
        ['POST', `/users/${target.id}/enable`],
        ['POST', `/users/${target.id}/disable`],
      ];
      for (const path of reads) {
        assert.equal((await call('GET', path, undefined, tokens.reader)).status, 200, path);
        assert.equal((await call('GET', path, undefined, tokens.nobody)).status, 403, path);
        assert.equal((await call('GET', path, undefined, tokens.otherAudience)).status, 401, path);
      }
      for (const [method, path, body] of writes) {
        assert.equal((await call(method, path, body, tokens.reader)).status, 403, `${method} ${path}`);
        assert.equal((await call(method, path, body, tokens.nobody)).status, 403, `${method} ${path}`);
        assert.equal((await call(method, path, body, tokens.otherAudience)).status, 401, `${method} ${path}`);
      }
      const unchanged = await server.gatehouse.store.users.get(target.id);
      assert.equal(unchanged?.status, 'enabled');
      assert.equal(unchanged?.givenName, target.givenName);
      assert.equal(await server.gatehouse.store.users.getByUsername('reader-made'), undefined);
    });

    test('the list: q searches username, email and names case-insensitively; status, group and organization filter', async () => {
      const store = server.gatehouse.store;
      const a = await addUser(store, { username: 'qq-anna', email: 'anna@zeta.example', givenName: 'Anna', familyName: 'Virtanen' });
      const b = await addUser(store, { username: 'qq-bertil', email: 'b@example.org', givenName: 'Bertil', familyName: 'ZETAson', status: 'disabled' });
      await addUser(store, { username: 'qq-cecilia', email: 'c@example.org', givenName: 'Cecilia', familyName: 'Nyström' });
      const page = await call('GET', '/users?q=ZeTa');
      assert.deepEqual(page.json.items?.map((u) => u.id), [a.id, b.id]);
      assert.equal(page.json.next_cursor, null);
      assert.deepEqual((await call('GET', '/users?q=qq-&status=disabled')).json.items?.map((u) => u.id), [b.id]);
      const org = await call('POST', '/organizations', { technical_name: 'qq-org' });
      await call('PATCH', `/users/${a.id}`, { organization_id: org.json.id });
      assert.deepEqual((await call('GET', `/users?organization_id=${org.json.id as string}`)).json.items?.map((u) => u.id), [a.id]);
      await call('POST', '/groups', { name: 'qq-group' });
      await call('PUT', `/groups/qq-group/members/${b.id}`);
      assert.deepEqual((await call('GET', '/users?group=QQ-GROUP')).json.items?.map((u) => u.id), [b.id]);
      assert.deepEqual((await call('GET', '/users?group=no-such-group')).json.items, []);
      assert.deepEqual((await call('GET', '/users?q=100%25')).json.items, [], 'a LIKE wildcard is literal');
    });

    test('paging is stable under concurrent inserts: no user twice, none skipped', async () => {
      const store = server.gatehouse.store;
      const initial = [];
      for (const letter of ['b', 'd', 'f', 'h', 'j']) initial.push(await addUser(store, { username: `pp-${letter}` }));
      const seen: string[] = [];
      const inserted: string[] = [];
      let cursor: string | null | undefined;
      for (let page = 0; page < 20; page++) {
        const answer = await call('GET', `/users?q=pp-&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(answer.status, 200, answer.text);
        seen.push(...(answer.json.items ?? []).map((u) => u.id as string));
        cursor = answer.json.next_cursor;
        if (!cursor) break;
        // Concurrently: one user sorting before everything shown (an offset would repeat a row), one after.
        await addUser(store, { username: `pp-a${page}` });
        inserted.push((await addUser(store, { username: `pp-z${page}` })).id);
      }
      assert.equal(new Set(seen).size, seen.length, 'no user twice');
      assert.deepEqual(seen.slice(0, 5), initial.map((u) => u.id));
      assert.deepEqual(new Set(seen.slice(5)), new Set(inserted));
    });

    test('hostile input is a 4xx, never a 5xx', async () => {
      const answers = [
        await call('GET', '/users/not-a-uuid'),
        await call('GET', `/users/${'9'.repeat(5000)}`),
        await call('GET', '/users?cursor=!!!'),
        await call('GET', `/users?cursor=${Buffer.from('{"a":1}').toString('base64url')}`),
        await call('GET', `/users?cursor=${Buffer.from('not json').toString('base64url')}`),
        await call('GET', '/users?limit=0'),
        await call('GET', '/users?limit=100000'),
        await call('GET', '/users?status=root'),
        await call('GET', '/users?sort=password_hash'),
        await call('GET', `/users?q=${'x'.repeat(1000)}`),
        await call('GET', '/users?organization_id=%27%20or%201=1--'),
        await call('POST', '/users', ['username']),
        await call('POST', '/users', 'null'),
        await call('POST', '/users', { username: { $ne: 1 } }),
        await manageCall(server, 'POST', '/users', { token: tokens.admin, body: '{"username":"proto","attributes":{"__proto__":["x"]}}', contentType: 'application/json' }),
        await manageCall(server, 'POST', '/users', { token: tokens.admin, body: '{"username":"proto2","constructor":{"prototype":{"x":1}}}', contentType: 'application/json' }),
        await call('POST', '/users', { username: 'many', attributes: Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`a${i}`, ['v']])) }),
        await manageCall(server, 'POST', '/users', { token: tokens.admin, body: '{"username":', contentType: 'application/json' }),
        await manageCall(server, 'POST', '/users', { token: tokens.admin, body: 'username=x', contentType: 'application/x-www-form-urlencoded' }),
        await call('PUT', `/users/${tokens.nobodyUser.id}/password`, { password: 12345678 }),
        await call('DELETE', '/users/00000000-0000-4000-8000-000000000000'),
        await call('POST', '/users/00000000-0000-4000-8000-000000000000/disable'),
      ];
      for (const answer of answers) assert.ok(answer.status >= 400 && answer.status < 500, `${answer.status} ${answer.text.slice(0, 200)}`);
    });

    test('the last enabled administrator can be neither deleted nor disabled (409); another one can', async () => {
      const store = server.gatehouse.store;
      const group = (await store.groups.getByName(server.config.manageAdminGroup))!;
      for (const id of await store.groups.members(group.id)) if (id !== tokens.adminUser.id) await store.groups.removeMember(group.id, id);
      // A disabled member is no administrator: it does not count.
      await addManager(server, server.config.manageAdminGroup, { status: 'disabled' });
      for (const [method, path, change] of [
        ['DELETE', `/users/${tokens.adminUser.id}`, 'deleting'],
        ['POST', `/users/${tokens.adminUser.id}/disable`, 'disabling'],
      ] as const) {
        const refused = await call(method, path);
        assert.equal(refused.status, 409, refused.text);
        // The body as it was before the rule moved into the use case (issue 22): byte for byte.
        assert.equal(refused.text, JSON.stringify({ type: 'about:blank', title: 'Conflict', status: 409, detail: `${change} ${tokens.adminUser.username} would leave the administrators group "Administrators" without an enabled member; make someone else an administrator first` }));
      }
      assert.equal((await store.users.get(tokens.adminUser.id))?.status, 'enabled');
      const other = await addManager(server, server.config.manageAdminGroup);
      assert.equal((await call('POST', `/users/${other.id}/disable`)).status, 200, 'another administrator remains');
      assert.equal((await call('POST', `/users/${other.id}/enable`)).status, 200);
      assert.equal((await call('DELETE', `/users/${other.id}`)).status, 204);
    });

    test('two administrators disabling each other at once: one succeeds, an enabled administrator remains', async () => {
      const store = server.gatehouse.store;
      const adminGroup = server.config.manageAdminGroup;
      const group = (await store.groups.getByName(adminGroup))!;
      const { issueManageToken } = await import('../../helpers/manage.ts');
      for (let round = 0; round < 5; round++) {
        const a = await addManager(server, adminGroup);
        const b = await addManager(server, adminGroup);
        for (const id of await store.groups.members(group.id)) if (id !== a.id && id !== b.id) await store.groups.removeMember(group.id, id);
        const [aToken, bToken] = [await issueManageToken(server, { userId: a.id }), await issueManageToken(server, { userId: b.id })];
        const answers = await Promise.all([call('POST', `/users/${b.id}/disable`, undefined, aToken), call('POST', `/users/${a.id}/disable`, undefined, bToken)]);
        const statuses = answers.map((r) => r.status).sort();
        assert.equal(statuses[0], 200, answers.map((r) => r.text).join(' | '));
        // The loser is refused as no longer an administrator (401/403) or by the rule (409).
        assert.ok([401, 403, 409].includes(statuses[1]!), statuses.join(','));
        const enabled = [(await store.users.get(a.id))?.status, (await store.users.get(b.id))?.status].filter((s) => s === 'enabled');
        assert.equal(enabled.length, 1);
      }
      await store.groups.addMember(group.id, tokens.adminUser.id);
    });

    test('a second administrator is named as the actor of their own changes', async () => {
      const other = await addManager(server, server.config.manageAdminGroup);
      const { issueManageToken } = await import('../../helpers/manage.ts');
      const token = await issueManageToken(server, { userId: other.id });
      const created = await call('POST', '/users', { username: 'made-by-other' }, token);
      assert.equal(created.status, 201);
      const event = audit.all().filter((e) => e.event === 'user.created').at(-1) as { actor: { caller?: string } };
      assert.equal(event.actor.caller, other.id);
    });
  });
}
