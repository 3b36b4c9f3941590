/**
 * The store members the management API added (src/storage/ports.ts): keyset pages of clients and
 * policies, and the conditional inserts of clients and groups that `gatehouse admin bootstrap`
 * makes; on every database, each test on a fresh one so that the pages hold only its rows.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import { ConflictError } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aClient, aGroup, T0, warmUp, withTestStore } from '../helpers/store.ts';

const aPolicy = (name: string) => ({ document: parsePolicyDocument({ name }), version: 1, createdAt: T0, updatedAt: T0 });

for (const kind of DATABASES) {
  describe(`management store members on ${kind.name}`, () => {
    test('clients.page: by client_id after the key, limit rows; q matches client_id or name case-insensitively, wildcards literally', async () => {
      await withTestStore(kind, async (store) => {
        for (const [clientId, name] of [['c-b', 'Beta shop'], ['c-a', 'Alpha'], ['c-d', 'Delta 100%'], ['c-c', 'Gamma_x']]) await store.clients.insert(aClient({ clientId, name }));
        assert.deepEqual((await store.clients.page({ limit: 3 })).map((c) => c.clientId), ['c-a', 'c-b', 'c-c']);
        assert.deepEqual((await store.clients.page({ after: 'c-b', limit: 3 })).map((c) => c.clientId), ['c-c', 'c-d']);
        assert.deepEqual((await store.clients.page({ after: 'c-d', limit: 3 })).map((c) => c.clientId), []);
        assert.deepEqual((await store.clients.page({ limit: 10, q: 'SHOP' })).map((c) => c.clientId), ['c-b']);
        assert.deepEqual((await store.clients.page({ limit: 10, q: 'C-' })).map((c) => c.clientId), ['c-a', 'c-b', 'c-c', 'c-d']);
        assert.deepEqual((await store.clients.page({ limit: 10, q: '%' })).map((c) => c.clientId), ['c-d'], '% matches only itself');
        assert.deepEqual((await store.clients.page({ limit: 10, q: '_' })).map((c) => c.clientId), ['c-c'], '_ matches only itself');
        assert.deepEqual(await store.clients.page({ limit: 10, q: 'c-b' }), [await store.clients.get('c-b')], 'whole clients');
      });
    });

    test('policies.page: by name after the key; q searches the name', async () => {
      await withTestStore(kind, async (store) => {
        for (const name of ['p-b', 'p-a', 'q-c']) await store.policies.insert(aPolicy(name));
        assert.deepEqual((await store.policies.page({ limit: 2 })).map((p) => p.document.name), ['p-a', 'p-b']);
        assert.deepEqual((await store.policies.page({ after: 'p-b', limit: 2 })).map((p) => p.document.name), ['q-c']);
        assert.deepEqual((await store.policies.page({ limit: 5, q: 'P-' })).map((p) => p.document.name), ['p-a', 'p-b']);
      });
    });

    test('paging while others insert concurrently: every row that existed is seen exactly once', async () => {
      await withTestStore(
        kind,
        async (store) => {
          await warmUp(store, 8);
          const existing = Array.from({ length: 30 }, (_, i) => `m-${String(i).padStart(3, '0')}`);
          for (const clientId of existing) await store.clients.insert(aClient({ clientId }));
          const seen: string[] = [];
          let after: string | undefined;
          let round = 0;
          for (;;) {
            const [rows] = await Promise.all([store.clients.page({ after, limit: 5 }), ...Array.from({ length: 4 }, (_, i) => store.clients.insert(aClient({ clientId: `m-${String(round * 4 + i).padStart(3, '0')}-new` })))]);
            seen.push(...rows!.map((c) => c.clientId));
            if (rows!.length < 5) break;
            after = rows!.at(-1)!.clientId;
            round++;
          }
          assert.equal(new Set(seen).size, seen.length, 'no row twice');
          for (const id of existing) assert.ok(seen.includes(id), id);
        },
        { poolSize: 8 },
      );
    });

    test('clients.insertIfAbsent inserts once, with its resource URIs; concurrent calls on two instances never fail', async () => {
      await withTestStore(
        kind,
        async (store, harness) => {
          const other = await harness.open({ poolSize: 8 });
          const server = aClient({ clientId: 'rs', metadata: { resource_server: true, resource_uris: ['https://api.example/v1'] } });
          const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? other : store).transaction((tx) => tx.clients.insertIfAbsent(server))));
          assert.equal(results.filter(Boolean).length, 1);
          assert.deepEqual(await store.clients.get('rs'), server);
          assert.equal((await store.clients.findByResourceUri('https://api.example/v1'))?.clientId, 'rs');
          assert.equal(await store.clients.insertIfAbsent({ ...server, name: 'changed' }), false);
          assert.equal((await store.clients.get('rs'))!.name, server.name, 'an existing client is left alone');
          // A resource URI another client holds is still a conflict, not silently skipped.
          await assert.rejects(store.clients.insertIfAbsent(aClient({ clientId: 'rs2', metadata: { resource_server: true, resource_uris: ['https://api.example/v1'] } })), ConflictError);
          assert.equal(await store.clients.get('rs2'), undefined, 'nothing of it stays');
        },
        { poolSize: 8 },
      );
    });

    test('groups.insertIfAbsent: once per name, case-insensitively; concurrent calls never fail', async () => {
      await withTestStore(
        kind,
        async (store, harness) => {
          const other = await harness.open({ poolSize: 8 });
          const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? other : store).groups.insertIfAbsent(aGroup({ name: i % 3 ? 'Administrators' : 'ADMINISTRATORS' }))));
          assert.equal(results.filter(Boolean).length, 1);
          assert.equal((await store.groups.list()).length, 1);
        },
        { poolSize: 8 },
      );
    });
  });
}
