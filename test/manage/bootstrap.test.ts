/**
 * The bootstrap use case on every database: what it creates, that a second run creates nothing,
 * and that concurrent runs on two stores (two instances) neither fail nor duplicate anything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { verifyPassword } from '../../src/identity/passwords.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { bootstrap } from '../../src/manage/bootstrap.ts';
import { alignManagementClients, CONSOLE_CLIENT_ID, MANAGE_API_CLIENT_ID } from '../../src/manage/management-clients.ts';
import type { Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { openTestStore, T0, type TestStore } from '../helpers/store.ts';

const config = loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/uas' });
const deps = (store: Store) => ({ transaction: store.transaction, clock: new ManualClock(T0), random: cryptoRandom });

for (const kind of DATABASES) {
  describe(`admin bootstrap on ${kind.name}`, () => {
    let harness: TestStore;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: 10 });
    });
    after(async () => harness.close());

    test('creates the two clients, the two groups and the first administrator; a second run creates nothing', async () => {
      const store = harness.store;
      const first = await bootstrap(deps(store), config, { username: 'root', password: 'correct horse battery', email: 'root@example.com' });
      assert.deepEqual(first.clients, [MANAGE_API_CLIENT_ID, CONSOLE_CLIENT_ID]);
      assert.deepEqual(first.groups, ['Administrators', 'Administrators (read-only)']);
      assert.equal(first.user?.created, true);
      assert.equal(first.generatedPassword, undefined);
      assert.equal(first.changed, true);

      const api = (await store.clients.get(MANAGE_API_CLIENT_ID))!;
      assert.equal(api.metadata.resource_server, true);
      assert.deepEqual(api.metadata.resource_uris, ['https://sso.example.com/manage/api/v1']);
      assert.equal((await store.clients.findByResourceUri('https://sso.example.com/manage/api/v1'))?.clientId, MANAGE_API_CLIENT_ID);
      const console = (await store.clients.get(CONSOLE_CLIENT_ID))!;
      assert.equal(console.tokenEndpointAuthMethod, 'none');
      assert.equal(console.codeChallengeMethod, 'S256');
      assert.deepEqual(console.redirectUris, ['https://sso.example.com/manage/callback'], 'from the issuer origin, not its path');
      assert.deepEqual(console.postLogoutRedirectUris, ['https://sso.example.com/manage/']);
      assert.deepEqual(console.metadata.aud, [MANAGE_API_CLIENT_ID]);
      assert.equal(console.name, 'gatehouse console');
      assert.equal(console.active, true);

      const user = (await store.users.getByUsername('root'))!;
      assert.equal(user.email, 'root@example.com');
      assert.equal(await store.groups.isMember(user.id, 'Administrators'), true);
      assert.equal(await verifyPassword((await store.users.getCredentials('root'))!.passwordHash, 'correct horse battery'), true);

      const second = await bootstrap(deps(store), config, { username: 'root', password: 'another password!' });
      assert.deepEqual(second, { clients: [], groups: [], user: { id: user.id, username: 'root', created: false }, changed: false });
      assert.equal(await verifyPassword((await store.users.getCredentials('root'))!.passwordHash, 'correct horse battery'), true, 'an existing user is left alone');
    });

    test('the two groups are marked as administrator groups, ones that existed unmarked included (AD4)', async () => {
      const fresh = await openTestStore(kind);
      try {
        const moved = loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/uas', GATEHOUSE_ADMIN_GROUP: 'Ops', GATEHOUSE_ADMIN_READONLY_GROUP: 'Ops readers' });
        await fresh.store.groups.insert({ id: crypto.randomUUID(), name: 'Ops', description: undefined, createdAt: T0, administrator: false });
        assert.deepEqual((await bootstrap(deps(fresh.store), moved)).groups, ['Ops readers']);
        assert.deepEqual((await fresh.store.groups.list()).map((g) => [g.name, g.administrator]), [['Ops', true], ['Ops readers', true]]);
      } finally {
        await fresh.close();
      }
    });

    test('without a password one is generated, returned once; bad input names the field', async () => {
      const result = await bootstrap(deps(harness.store), config, { username: 'second-admin' });
      assert.equal(typeof result.generatedPassword, 'string');
      assert.ok(result.generatedPassword!.length >= 20);
      assert.equal(await verifyPassword((await harness.store.users.getCredentials('second-admin'))!.passwordHash, result.generatedPassword!), true);
      // The password policy's own refusal (an IdentityError naming its rule, docs/security.md "Password policy").
      await assert.rejects(bootstrap(deps(harness.store), config, { username: 'x', password: 'short' }), { name: 'PasswordRefused', field: 'password', reason: 'too_short' });
      await assert.rejects(bootstrap(deps(harness.store), config, { username: 'y', email: 'not-an-address' }), { name: 'IdentityError', field: 'email' });
      assert.equal(await harness.store.users.getByUsername('x'), undefined);
    });

    test('six concurrent bootstraps on two instances: none fails, one of each thing exists, one run created the user', async () => {
      const fresh = await openTestStore(kind, { poolSize: 10 });
      try {
        const other = await fresh.open({ poolSize: 10 });
        const stores = [fresh.store, other];
        const results = await Promise.all(Array.from({ length: 6 }, (_, i) => bootstrap(deps(stores[i % 2]!), config, { username: 'Racer', password: 'correct horse battery' })));
        assert.equal(results.flatMap((r) => r.clients).length, 2, 'each client created once');
        assert.deepEqual(new Set(results.flatMap((r) => r.clients)), new Set([MANAGE_API_CLIENT_ID, CONSOLE_CLIENT_ID]));
        assert.equal(results.flatMap((r) => r.groups).length, 2, 'each group created once');
        assert.equal(results.filter((r) => r.user?.created).length, 1, 'one run created the user');
        assert.equal(new Set(results.map((r) => r.user?.id)).size, 1, 'every run names the same user');
        assert.equal((await fresh.store.groups.list()).length, 2);
        assert.equal((await fresh.store.clients.list()).length, 2);
        const user = (await fresh.store.users.getByUsername('racer'))!;
        assert.deepEqual(await fresh.store.groups.members((await fresh.store.groups.getByName('Administrators'))!.id), [user.id]);
      } finally {
        await fresh.close();
      }
    });

    test('a server on another issuer puts its URIs into the two clients bootstrap made, keeping everything else; again: no change (CO14)', async () => {
      const fresh = await openTestStore(kind);
      try {
        const store = fresh.store;
        // Bootstrap with the defaults (no GATEHOUSE_ISSUER, no port): the console for 127.0.0.1:8080.
        await bootstrap(deps(store), loadConfig({}), {});
        await store.clients.update({ ...(await store.clients.get(CONSOLE_CLIENT_ID))!, name: 'Our console' });
        const before = (await store.clients.get(CONSOLE_CLIENT_ID))!;
        const clock = new ManualClock(T0 + 60_000);
        assert.deepEqual(await alignManagementClients({ store, clock }, config), [MANAGE_API_CLIENT_ID, CONSOLE_CLIENT_ID]);
        const consoleClient = (await store.clients.get(CONSOLE_CLIENT_ID))!;
        assert.deepEqual(consoleClient.redirectUris, ['https://sso.example.com/manage/callback']);
        assert.deepEqual(consoleClient.postLogoutRedirectUris, ['https://sso.example.com/manage/']);
        assert.deepEqual({ ...consoleClient, redirectUris: [], postLogoutRedirectUris: [], updatedAt: 0 }, { ...before, redirectUris: [], postLogoutRedirectUris: [], updatedAt: 0 }, 'nothing else changed');
        assert.equal(consoleClient.updatedAt, T0 + 60_000);
        const api = (await store.clients.get(MANAGE_API_CLIENT_ID))!;
        assert.deepEqual(api.metadata.resource_uris, ['https://sso.example.com/manage/api/v1']);
        assert.equal((await store.clients.findByResourceUri('https://sso.example.com/manage/api/v1'))?.clientId, MANAGE_API_CLIENT_ID);
        assert.equal(await store.clients.findByResourceUri('http://127.0.0.1:8080/manage/api/v1'), undefined, 'the old resource URI is gone');
        assert.deepEqual(await alignManagementClients({ store, clock }, config), [], 'idempotent');
      } finally {
        await fresh.close();
      }
    });

    test('no clients yet: aligning changes nothing and creates nothing (that is the bootstrap\'s)', async () => {
      const fresh = await openTestStore(kind);
      try {
        assert.deepEqual(await alignManagementClients({ store: fresh.store, clock: new ManualClock(T0) }, config), []);
        assert.deepEqual(await fresh.store.clients.list(), []);
      } finally {
        await fresh.close();
      }
    });

    test('eight instances aligning at once (two stores): none fails, each client changed by exactly one of them', async () => {
      const fresh = await openTestStore(kind, { poolSize: 10 });
      try {
        const other = await fresh.open({ poolSize: 10 });
        await bootstrap(deps(fresh.store), loadConfig({}), {});
        const stores = [fresh.store, other];
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => alignManagementClients({ store: stores[i % 2]!, clock: new ManualClock(T0) }, config)));
        assert.deepEqual(results.flat().sort(), [CONSOLE_CLIENT_ID, MANAGE_API_CLIENT_ID].sort(), 'each client changed once');
        assert.deepEqual((await fresh.store.clients.get(CONSOLE_CLIENT_ID))!.redirectUris, ['https://sso.example.com/manage/callback']);
        assert.deepEqual((await fresh.store.clients.get(MANAGE_API_CLIENT_ID))!.metadata.resource_uris, ['https://sso.example.com/manage/api/v1']);
      } finally {
        await fresh.close();
      }
    });
  });
}
