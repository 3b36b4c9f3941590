/**
 * Administrators are out of the identity API's reach (issue 22, item 1; docs/identity-api.md,
 * "Administrators are out of reach"): its Basic account, a bearer member of its group and a
 * machine client (client_credentials) can neither make anyone a management administrator nor
 * change, delete or regroup an administrator (read-only ones included); an administrator's own
 * bearer token can, within the rule that keeps an enabled administrator (409), which also holds
 * against a management-API change racing it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { User } from '../../../src/domain/user.ts';
import { MANAGE_API_CLIENT_ID } from '../../../src/manage/management-clients.ts';
import { addUser, basic, postForm } from '../../helpers/back-channel.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { createTestClient } from '../../helpers/fixtures.ts';
import { ensureManagementSetup, issueManageToken, manageCall } from '../../helpers/manage.ts';
import type { RunningServer } from '../../helpers/server.ts';
import { accessToken, assertCleanError, basicAuth, call, type ApiResponse } from './helpers.ts';
import { startApiServer } from './helpers.ts';

const API_GROUP = 'Identity API Users';
const ADMINS = 'Administrators';
const READERS = 'Administrators (read-only)';
const OUT_OF_REACH = /is refused: .+; only a management administrator may change it/;

for (const db of DATABASES) {
  describe(`identity API: administrators out of reach (${db.name})`, () => {
    let server: RunningServer & { apiClientId: string };
    /** An administrator who may also call the identity API (a member of its group). */
    let admin: User;
    let reader: User;
    /** A member of the identity API's group, and no administrator. */
    let member: User;
    let callers: { name: string; authorization: string; self?: User }[];
    let adminBearer: string;

    const store = () => server.gatehouse.store;
    const groupId = async (name: string) => (await store().groups.getByName(name))!.id;
    const users = (path: string) => `/2.0/users/${path}`;
    const inGroup = (name: string) => `groups/${encodeURIComponent(name)}`;

    async function newUser(groups: string[] = [], overrides: Partial<User> = {}): Promise<User> {
      const user = await addUser(store(), overrides);
      for (const name of groups) await store().groups.addMember(await groupId(name), user.id);
      return user;
    }

    async function groupNames(user: User): Promise<string[]> {
      return (await store().groups.groupsOf(user.id)).map((g) => g.name).sort();
    }

    /** The user row and password hash, to prove a refused change changed nothing. */
    async function snapshot(user: User): Promise<unknown> {
      const row = await store().users.get(user.id);
      return { row, hash: row === undefined ? undefined : (await store().users.getCredentials(row.username))?.passwordHash, groups: await groupNames(user) };
    }

    function refused(response: ApiResponse, what: string): void {
      assertCleanError(response, 403, 'Unauthorized');
      assert.match(response.json.error!.message, OUT_OF_REACH, what);
    }

    before(async () => {
      server = await startApiServer(db);
      await ensureManagementSetup(server);
      await store().groups.insertIfAbsent({ id: crypto.randomUUID(), name: API_GROUP, description: undefined, createdAt: Date.now(), administrator: false });
      admin = await newUser([ADMINS, API_GROUP]);
      reader = await newUser([READERS]);
      member = await newUser([API_GROUP]);
      adminBearer = `Bearer ${(await accessToken(server, `openid ${server.apiClientId}`, admin)).token}`;
      const memberBearer = `Bearer ${(await accessToken(server, `openid ${server.apiClientId}`, member)).token}`;
      // A machine client allowed the API: its own token (client_credentials) calls as itself.
      const { client, clientSecret } = await createTestClient(store(), { grantTypes: ['client_credentials'], redirectUris: [], metadata: { aud: [server.apiClientId] } });
      const machine = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'client_credentials', scope: server.apiClientId }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(machine.status, 200, JSON.stringify(machine.body));
      callers = [
        { name: 'the Basic account', authorization: basicAuth() },
        { name: 'a bearer member of the API group', authorization: memberBearer, self: member },
        { name: 'a client_credentials machine client', authorization: `Bearer ${machine.body.access_token as string}` },
      ];
    });
    after(async () => server.close());

    test('nobody but an administrator can put a user (themselves included) into either administrator group', async () => {
      for (const caller of callers) {
        const victim = await newUser();
        for (const target of [victim, ...(caller.self ? [caller.self] : [])]) {
          for (const group of [ADMINS, 'ADMINISTRATORS', READERS]) {
            for (const version of ['2.0', '2.1']) {
              const response = await call(server, 'PUT', `/${version}/users/${target.id}/${inGroup(group)}`, { authorization: caller.authorization });
              refused(response, `${caller.name}: PUT ${group}`);
            }
          }
          assert.deepEqual(await groupNames(target), target === member ? [API_GROUP] : [], `${caller.name} made nobody an administrator`);
        }
        // A user created through the API with a "groups" attribute is in no group: creation takes no memberships.
        const created = await call(server, 'POST', users(''), { authorization: caller.authorization, contentType: 'application/json', body: JSON.stringify({ attributes: { login: [`made-${crypto.randomUUID()}`], groups: [ADMINS] } }) });
        assert.equal(created.status, 201, created.text);
        const id = (created.json.users as string[])[0]!;
        assert.deepEqual((await store().groups.groupsOf(id)).map((g) => g.name), []);
      }
    });

    test('nobody but an administrator can change, delete or regroup an administrator or a read-only administrator', async () => {
      for (const caller of callers) {
        for (const target of [admin, reader]) {
          const before = await snapshot(target);
          const attempts: [string, string, Record<string, string[]>?][] = [
            ['PUT', users(target.id), { password: ['attacker chose this'] }],
            ['PUT', users(target.id), { status: ['disabled'] }],
            ['PUT', users(target.id), { status: ['enabled'] }],
            ['PUT', users(target.id), { login: [`renamed-${crypto.randomUUID()}`] }],
            ['PUT', users(target.id), { email: ['attacker@example.com'] }],
            ['PUT', users(target.id), { team: ['red'] }],
            ['DELETE', users(target.id)],
            ['DELETE', users(`${target.id}/${inGroup(target === admin ? ADMINS : READERS)}`)],
            ['DELETE', users(`${target.id}/${inGroup(API_GROUP)}`)],
            ['PUT', users(`${target.id}/${inGroup(API_GROUP)}`)],
          ];
          for (const [method, path, attributes] of attempts) {
            const response = await call(server, method, path, { authorization: caller.authorization, ...(attributes ? { contentType: 'application/json', body: JSON.stringify({ attributes }) } : {}) });
            refused(response, `${caller.name}: ${method} ${path} ${JSON.stringify(attributes ?? {})}`);
          }
          assert.deepEqual(await snapshot(target), before, `${caller.name} changed nothing of ${target.username}`);
        }
        // Removing someone who is not a member of an administrator group is refused as well (not 404): the group is out of reach.
        refused(await call(server, 'DELETE', users(`${member.id}/${inGroup(ADMINS)}`), { authorization: caller.authorization }), `${caller.name}: DELETE a non-member`);
      }
    });

    test('reads stay open, and users who are not administrators stay in reach', async () => {
      for (const caller of callers) {
        assert.equal((await call(server, 'GET', users(admin.id), { authorization: caller.authorization })).status, 200);
        const groups = await call(server, 'GET', users(`${admin.id}/groups/`), { authorization: caller.authorization });
        assert.deepEqual(groups.json.groups, [ADMINS, API_GROUP].sort((a, b) => a.localeCompare(b)));
        const someone = await newUser();
        assert.equal((await call(server, 'PUT', users(someone.id), { authorization: caller.authorization, contentType: 'application/json', body: JSON.stringify({ attributes: { password: ['a new password 1'], status: ['disabled'] } }) })).status, 200);
        assert.equal((await call(server, 'PUT', users(`${someone.id}/${inGroup(API_GROUP)}`), { authorization: caller.authorization })).status, 201);
        assert.equal((await call(server, 'DELETE', users(`${someone.id}/${inGroup(API_GROUP)}`), { authorization: caller.authorization })).status, 200);
        assert.equal((await call(server, 'DELETE', users(someone.id), { authorization: caller.authorization })).status, 200);
      }
    });

    test("an administrator's bearer token reaches administrators: adds, changes, removes and deletes them", async () => {
      const other = await newUser();
      assert.equal((await call(server, 'PUT', users(`${other.id}/${inGroup(ADMINS)}`), { authorization: adminBearer })).status, 201);
      assert.equal((await call(server, 'PUT', users(`${other.id}/${inGroup(READERS)}`), { authorization: adminBearer })).status, 201);
      assert.deepEqual(await groupNames(other), [ADMINS, READERS]);
      const changed = await call(server, 'PUT', users(other.id), { authorization: adminBearer, contentType: 'application/json', body: JSON.stringify({ attributes: { password: ['set by an administrator'], email: ['other@example.com'] } }) });
      assert.equal(changed.status, 200, changed.text);
      assert.equal((await store().users.get(other.id))?.email, 'other@example.com');
      assert.equal((await call(server, 'DELETE', users(`${other.id}/${inGroup(READERS)}`), { authorization: adminBearer })).status, 200);
      assert.equal((await call(server, 'PUT', users(other.id), { authorization: adminBearer, contentType: 'application/json', body: JSON.stringify({ attributes: { status: ['disabled'] } }) })).status, 200);
      assert.equal((await call(server, 'DELETE', users(other.id), { authorization: adminBearer })).status, 200);
      assert.equal(await store().users.get(other.id), undefined);
    });

    test('the last enabled administrator cannot be deleted, disabled or removed, even by their own token (409)', async () => {
      const group = await groupId(ADMINS);
      for (const id of await store().groups.members(group)) if (id !== admin.id) await store().groups.removeMember(group, id);
      await newUser([ADMINS], { status: 'disabled' }); // a disabled member does not count
      const before = await snapshot(admin);
      for (const [method, path, attributes] of [
        ['DELETE', users(admin.id)],
        ['PUT', users(admin.id), { status: ['disabled'] }],
        ['PUT', users(admin.id), { status: ['locked'] }],
        ['DELETE', users(`${admin.id}/${inGroup(ADMINS)}`)],
      ] as [string, string, Record<string, string[]>?][]) {
        const response = await call(server, method, path, { authorization: adminBearer, ...(attributes ? { contentType: 'application/json', body: JSON.stringify({ attributes }) } : {}) });
        assertCleanError(response, 409, 'Client error');
        assert.match(response.json.error!.message, /would leave the administrators group "Administrators" without an enabled member; make someone else an administrator first$/);
      }
      assert.deepEqual(await snapshot(admin), before);
    });

    test('an identity-API removal racing a management-API removal: exactly one wins, one enabled administrator remains', async () => {
      const { client } = await createTestClient(store(), { name: 'automation', grantTypes: ['client_credentials'], redirectUris: [], metadata: { aud: [MANAGE_API_CLIENT_ID] } });
      const automation = await issueManageToken(server, { userId: undefined, clientId: client.clientId, scope: MANAGE_API_CLIENT_ID });
      const group = await groupId(ADMINS);
      for (let round = 0; round < 5; round++) {
        const x = await newUser([ADMINS, API_GROUP]);
        const y = await newUser([ADMINS]);
        for (const id of await store().groups.members(group)) if (id !== x.id && id !== y.id) await store().groups.removeMember(group, id);
        const xBearer = `Bearer ${(await accessToken(server, `openid ${server.apiClientId}`, x)).token}`;
        const [viaIdentity, viaManage] = await Promise.all([
          call(server, 'DELETE', users(y.id), { authorization: xBearer }),
          manageCall(server, 'POST', `/users/${x.id}/disable`, { token: automation }),
        ]);
        const wins = [viaIdentity.status === 200, viaManage.status === 200].filter(Boolean).length;
        assert.equal(wins, 1, `${viaIdentity.status} ${viaIdentity.text} | ${viaManage.status} ${viaManage.text}`);
        // The loser: the rule (409), or an identity-API caller who is no administrator any more (401: disabling revoked the token).
        if (viaManage.status !== 200) assert.equal(viaManage.status, 409, viaManage.text);
        else assert.ok([401, 403, 409].includes(viaIdentity.status), viaIdentity.text);
        const enabled = [];
        for (const id of await store().groups.members(group)) if ((await store().users.get(id))?.status === 'enabled') enabled.push(id);
        assert.equal(enabled.length, 1);
      }
      await store().groups.addMember(group, admin.id);
    });
  });
}
