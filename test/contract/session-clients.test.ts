/**
 * The relying parties of each SSO session (SessionClientStore, migration 034; back-channel logout,
 * decisions LO3–LO4) on every database: a row is written only while its session exists (one
 * conditional INSERT … SELECT), once per (session, client, sid); taking a session's rows is one
 * DELETE … RETURNING, so of racing units of work that end one session exactly one gets them, on
 * two instances; rows move with a replaced session; rows whose session is gone are cleaned up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SessionClient, Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aSessionIndex, aStoredSession, openTestStore, T0, unique, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;

for (const kind of DATABASES) {
  describe(`session clients store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    let other: Store;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS / 2 });
      store = harness.store;
      other = await harness.open({ poolSize: RACERS / 2 });
      await Promise.all([warmUp(store, RACERS / 2), warmUp(other, RACERS / 2)]);
    });
    after(async () => harness.close());

    const entry = (sessionIndex: string, clientId = unique('client'), sid = unique('sid')): SessionClient => ({ sessionIndex, clientId, sid });

    test('recorded only while the session exists, once per (session, client, sid); taken with the session, in order', async () => {
      const session = await aStoredSession(store);
      const one = entry(session.sessionIndex, 'a-client');
      const two = entry(session.sessionIndex, 'b-client');
      await store.sessionClients.record(one, T0);
      await store.sessionClients.record(one, T0 + 1);
      await store.sessionClients.record(two, T0);
      const gone = aSessionIndex();
      await store.sessionClients.record(entry(gone), T0);
      assert.deepEqual(await store.sessionClients.takeOfSessions([session.sessionIndex, gone]), [one, two]);
      assert.deepEqual(await store.sessionClients.takeOfSessions([session.sessionIndex]), [], 'taken once');
      assert.deepEqual(await store.sessionClients.takeOfSessions([]), []);
    });

    test('of racing takes of one session on two instances, exactly one gets its rows', async () => {
      const session = await aStoredSession(store);
      const rows = [entry(session.sessionIndex), entry(session.sessionIndex)];
      for (const row of rows) await store.sessionClients.record(row, T0);
      const takes = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 ? other : store).sessionClients.takeOfSessions([session.sessionIndex])));
      assert.deepEqual(takes.map((t) => t.length).sort((x, y) => y - x), [2, ...Array<number>(RACERS - 1).fill(0)]);
    });

    test('moved to the session that replaced theirs, keeping the sid; orphans cleaned up', async () => {
      const from = await aStoredSession(store);
      const to = await aStoredSession(store, { userId: from.userId });
      const row = entry(from.sessionIndex);
      await store.sessionClients.record(row, T0);
      assert.equal(await store.sessionClients.move(from.sessionIndex, to.sessionIndex), 1);
      await store.sessionClients.record(entry(to.sessionIndex, 'keep'), T0);
      const orphan = await aStoredSession(store);
      await store.sessionClients.record(entry(orphan.sessionIndex), T0);
      await store.sessions.end(orphan.idHash);
      assert.ok((await store.sessionClients.deleteOrphans(1000)) >= 1);
      assert.deepEqual(await store.sessionClients.takeOfSessions([orphan.sessionIndex]), []);
      assert.deepEqual((await store.sessionClients.takeOfSessions([to.sessionIndex])).map((r) => [r.clientId, r.sid === row.sid]).sort(), [[row.clientId, true], ['keep', false]].sort());
    });
  });
}
