/**
 * The store remembers which groups are or were administrator groups (issue 22 item 1; decision
 * AD4; docs/identity-api.md, "Administrators are out of reach"). The outside attack of item 10:
 * a server run with the default GATEHOUSE_ADMIN_GROUP, then with `Admins2`, let the identity API's
 * Basic account put a user into `Administrators` — an administrator again once the setting
 * returned. Now the group keeps its mark, set by `admin bootstrap`, by a server starting with it
 * configured, or by a front end creating it, and the identity API stays out of it and its members
 * whatever the settings name, until an operator unmarks it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { User } from '../../../src/domain/user.ts';
import { cryptoRandom } from '../../../src/lib/random.ts';
import { bootstrap } from '../../../src/manage/bootstrap.ts';
import { ensureManagementClients, MANAGE_API_CLIENT_ID } from '../../../src/manage/management-clients.ts';
import { openSqlStore } from '../../../src/storage/sql/store.ts';
import { addUser } from '../../helpers/back-channel.ts';
import { DATABASES, type TestDatabase } from '../../helpers/databases.ts';
import { createTestClient } from '../../helpers/fixtures.ts';
import { issueManageToken, manageCall } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';
import { API_PASSWORD, API_USERNAME, assertCleanError, call, type ApiResponse } from './helpers.ts';

const API_ACCOUNT = { GATEHOUSE_API_USERNAME: API_USERNAME, GATEHOUSE_API_PASSWORD: API_PASSWORD };
const MOVED = { ...API_ACCOUNT, GATEHOUSE_ADMIN_GROUP: 'Admins2', GATEHOUSE_ADMIN_READONLY_GROUP: 'Admins2 (read-only)' };
const inGroup = (user: User, group: string, version = '2.0') => `/${version}/users/${user.id}/groups/${encodeURIComponent(group)}`;

const MARKED = 'is marked as an administrator group (it was one; an operator may unmark it); only a management administrator may change it (docs/identity-api.md, "Administrators are out of reach")';

/** 403, and the message: `change` refused because `group` (or the user's membership of it) is marked. */
function refusedAsMarked(response: ApiResponse, change: string, group: string, member = false): void {
  assertCleanError(response, 403, 'Unauthorized');
  const why = member ? `the user is a member of ${JSON.stringify(group)}, which ${MARKED}` : `${JSON.stringify(group)} ${MARKED}`;
  assert.equal(response.json.error!.message, `${change} is refused: ${why}`);
}

for (const db of DATABASES) {
  describe(`identity API: administrator groups remembered across a change of the settings (${db.name})`, () => {
    /** Servers started on one store, closed newest first; the store dropped last. */
    const servers: RunningServer[] = [];
    let database: TestDatabase;
    const start = async (env: Record<string, string>) => {
      const server = await startServer(db, { database, env });
      servers.push(server);
      return server;
    };
    const groupsOf = async (server: RunningServer, user: User) => (await server.gatehouse.store.groups.groupsOf(user.id)).map((g) => g.name).sort();

    before(async () => {
      database = await db.create();
    });
    after(async () => {
      for (const server of servers.reverse()) await server.close();
      await database.drop();
    });

    test('the attack: groups bootstrapped under the default settings stay out of reach of the API account after GATEHOUSE_ADMIN_GROUP=Admins2', async () => {
      const first = await start(API_ACCOUNT);
      const { store, deps } = first.gatehouse;
      const made = await bootstrap({ transaction: store.transaction, clock: deps.clock, random: cryptoRandom }, first.config, { username: 'root', password: 'correct horse battery' });
      assert.deepEqual(made.groups, ['Administrators', 'Administrators (read-only)']);
      const root = (await store.users.getByUsername('root'))!;
      const mallory = await addUser(store, { username: 'mallory' });

      const second = await start(MOVED);
      assert.equal(second.config.manageAdminGroup, 'Admins2');
      for (const [asked, group] of [['Administrators', 'Administrators'], ['ADMINISTRATORS', 'Administrators'], ['Administrators (read-only)', 'Administrators (read-only)']]) {
        for (const version of ['2.0', '2.1']) refusedAsMarked(await call(second, 'PUT', inGroup(mallory, asked!, version)), `adding mallory to ${JSON.stringify(group)}`, group!);
      }
      assert.deepEqual(await groupsOf(second, mallory), [], 'mallory was made no administrator');
      // The old administrator is out of reach too.
      refusedAsMarked(await call(second, 'PUT', `/2.0/users/${root.id}`, { contentType: 'application/json', body: JSON.stringify({ attributes: { password: ['attacker chose this'] } }) }), 'changing root', 'Administrators', true);
      refusedAsMarked(await call(second, 'DELETE', `/2.0/users/${root.id}`), 'deleting root', 'Administrators', true);
      assert.ok(await store.users.get(root.id));
      // A group that never was an administrator group stays in reach.
      await store.groups.insert({ id: crypto.randomUUID(), name: 'Staff', description: undefined, createdAt: Date.now(), administrator: false });
      assert.equal((await call(second, 'PUT', inGroup(mallory, 'Staff'))).status, 201);
      assert.deepEqual(await groupsOf(second, mallory), ['Staff']);
    });

    test('a group the server finds configured when it starts is marked, and stays out of reach after the setting moves on', async () => {
      // A group made before the mark existed (or by hand): unmarked until a server starts with it configured.
      const seed = await openSqlStore(database.url);
      try {
        await seed.groups.insert({ id: crypto.randomUUID(), name: 'Ops', description: undefined, createdAt: Date.now(), administrator: false });
      } finally {
        await seed.close();
      }
      const ops = await start({ ...API_ACCOUNT, GATEHOUSE_ADMIN_GROUP: 'Ops' });
      assert.equal((await ops.gatehouse.store.groups.getByName('Ops'))?.administrator, true);
      const moved = await start(MOVED);
      const eve = await addUser(moved.gatehouse.store);
      refusedAsMarked(await call(moved, 'PUT', inGroup(eve, 'Ops')), `adding ${eve.username} to "Ops"`, 'Ops');
      assert.deepEqual(await groupsOf(moved, eve), []);
    });

    test('a group the management API creates under a configured name is marked at once', async () => {
      const moved = await start(MOVED);
      const { store, deps } = moved.gatehouse;
      await ensureManagementClients({ store, clock: deps.clock }, moved.config);
      const { client } = await createTestClient(store, { grantTypes: ['client_credentials'], redirectUris: [], metadata: { aud: [MANAGE_API_CLIENT_ID] } });
      const token = await issueManageToken(moved, { userId: undefined, clientId: client.clientId, scope: MANAGE_API_CLIENT_ID });
      for (const name of ['Admins2 (read-only)', 'Plain']) assert.equal((await manageCall(moved, 'POST', '/groups', { token, body: { name } })).status, 201);
      assert.equal((await store.groups.getByName('Admins2 (read-only)'))?.administrator, true);
      assert.equal((await store.groups.getByName('Plain'))?.administrator, false);
      // Back to the default settings: Admins2's read-only group is still out of reach.
      const back = await start(API_ACCOUNT);
      const frank = await addUser(store);
      refusedAsMarked(await call(back, 'PUT', inGroup(frank, 'Admins2 (read-only)')), `adding ${frank.username} to "Admins2 (read-only)"`, 'Admins2 (read-only)');
      assert.equal((await call(back, 'PUT', inGroup(frank, 'Plain'))).status, 201);
    });
  });
}
