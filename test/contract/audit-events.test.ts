/**
 * Audit events kept in the store (migration 015, AuditStore) on every database: filters, the
 * newest-first keyset order and its stability while other instances insert, the bounded retention
 * delete and the cleanup job over it; and the batching sink over the real store.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { ManualClock } from '../../src/lib/clock.ts';
import { cleanUp } from '../../src/oauth/cleanup.ts';
import { AuditIds, storeAuditSink } from '../../src/observability/audit-store-sink.ts';
import type { AuditKey, AuditQuery, AuditRecord, AuditStore } from '../../src/storage/ports.ts';
import { SqlAuditStore } from '../../src/storage/sql/audit-store.ts';
import { DATABASES } from '../helpers/databases.ts';
import { openTestStore, T0, unique, type TestStore } from '../helpers/store.ts';

const DAY = 86_400_000;

function anEvent(overrides: Partial<AuditRecord> & { at: number }, ids = new AuditIds()): AuditRecord {
  return { id: ids.next(overrides.at), event: 'login.succeeded', data: { username: 'alice', ip: '203.0.113.1' }, ...overrides };
}

/** Every page of `query` from the start, following the keyset; the ids in the order read. */
async function readAll(store: AuditStore, query: Omit<AuditQuery, 'before' | 'limit'>, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let before: AuditKey | undefined;
  for (let pages = 0; ; pages++) {
    // A keyset that does not advance would page for ever: fail instead.
    if (pages > 10_000) assert.fail('the keyset does not advance');
    const rows = await store.page({ ...query, before, limit });
    ids.push(...rows.map((r) => r.id));
    if (rows.length < limit) return ids;
    const last = rows[rows.length - 1]!;
    before = { at: last.at, id: last.id };
  }
}

for (const kind of DATABASES) {
  describe(`audit event store on ${kind.name}`, () => {
    let harness: TestStore;
    let other: TestStore['store'];
    before(async () => {
      harness = await openTestStore(kind, { poolSize: 10 });
      other = await harness.open({ poolSize: 10 });
    });
    after(async () => harness.close());

    test('an event reads back as stored, its absent columns absent', async () => {
      const user = unique('u-');
      const stored = anEvent({ at: T0, userId: user, clientId: 'c1', actorId: 'root', event: 'user.created', data: { username: 'ü ñ "q"', actor: { via: 'cli', caller: 'root' }, nested: { n: 1 } } });
      const bare = anEvent({ at: T0 + 1, event: 'lockout', actorId: user, data: { kind: 'login' } });
      await harness.store.audit.insertMany([stored, bare]);
      assert.deepEqual(await harness.store.audit.page({ userId: user, limit: 10 }), [bare, stored]);
    });

    test('filters: since (inclusive), until (exclusive), types, client, and user = subject OR acting administrator', async () => {
      const admin = unique('admin-');
      const alice = unique('alice-');
      const client = unique('client-');
      const ids = new AuditIds();
      const e = [
        anEvent({ at: T0, event: 'client.created', clientId: client, actorId: admin, data: { actor: { via: 'manage-api', caller: admin } } }, ids),
        anEvent({ at: T0 + 10, event: 'login.succeeded', userId: alice, clientId: client }, ids),
        anEvent({ at: T0 + 20, event: 'user.updated', userId: alice, actorId: admin }, ids),
        anEvent({ at: T0 + 30, event: 'token.issued', userId: alice, clientId: client }, ids),
        anEvent({ at: T0 + 40, event: 'login.failed', clientId: client }, ids),
      ];
      await harness.store.audit.insertMany(e);
      const ids_ = async (query: Omit<AuditQuery, 'limit'>) => (await harness.store.audit.page({ ...query, limit: 50 })).map((r) => r.id);
      const id = (...n: number[]) => n.map((i) => e[i]!.id);
      assert.deepEqual(await ids_({ clientId: client }), id(4, 3, 1, 0), 'newest first');
      assert.deepEqual(await ids_({ userId: alice }), id(3, 2, 1));
      assert.deepEqual(await ids_({ userId: admin }), id(2, 0), 'what the administrator did');
      assert.deepEqual(await ids_({ clientId: client, since: T0 + 10, until: T0 + 40 }), id(3, 1));
      assert.deepEqual(await ids_({ clientId: client, types: ['login.succeeded', 'login.failed'] }), id(4, 1));
      assert.deepEqual(await ids_({ userId: alice, clientId: client, types: ['token.issued'] }), id(3));
      assert.deepEqual(await ids_({ userId: alice, types: ['policy.deleted'] }), []);
      assert.deepEqual(await ids_({ clientId: client, types: [] }), id(4, 3, 1, 0), 'no types: every event');
      assert.deepEqual(await ids_({ clientId: client, until: T0 }), []);
    });

    test('a user and several types together: one ordered keyset over every combination, an event about and by the same user once', async () => {
      const alice = unique('alice-');
      // Events of other tests share the database: this test's carry its own client.
      const client = unique('client-');
      const ids = new AuditIds();
      const types = ['user.updated', 'token.issued', 'login.failed'];
      // 30 events over 10 ms: alice as subject, as actor, as both (she changed herself), and others' events between.
      const e = Array.from({ length: 30 }, (_, i) =>
        anEvent(
          {
            at: T0 + Math.floor(i / 3),
            event: types[i % 3],
            clientId: client,
            userId: i % 5 === 1 ? unique('bob-') : alice,
            actorId: i % 4 === 0 ? alice : i % 4 === 1 ? unique('root-') : undefined,
          },
          ids,
        ),
      );
      await harness.store.audit.insertMany(e);
      const about = (r: AuditRecord) => r.userId === alice || r.actorId === alice;
      for (const query of [{ userId: alice, types, clientId: client }, { userId: alice, types: ['token.issued', 'user.updated'], clientId: client }, { types: ['login.failed', 'user.updated'], since: T0 + 2, clientId: client }]) {
        const wanted = (r: AuditRecord) => (query.userId === undefined || about(r)) && query.types.includes(r.event) && r.at >= (query.since ?? 0);
        const expected = e.filter(wanted).map((r) => r.id).reverse();
        assert.ok(expected.length > 5, 'the data exercises the query');
        for (const limit of [1, 4, 50]) assert.deepEqual(await readAll(harness.store.audit, query, limit), expected, `${JSON.stringify(query)}, pages of ${limit}`);
      }
    });

    test('a user filter reads the user and actor indexes, never the whole table (migration 017; SQLite plan)', { skip: kind.name !== 'sqlite' && 'PostgreSQL plans a table this small by cost, not shape' }, async () => {
      // The exact statement page() sends, captured and explained: an OR of the two columns made
      // SQLite walk audit_events_at and test every event.
      let last: RootOperationNode | undefined;
      const capture: KyselyPlugin = { transformQuery: ({ node }) => (last = node), transformResult: async ({ result }) => result };
      const db = harness.store.database.db;
      const audit = new SqlAuditStore(db.withPlugin(capture));
      const plan = async (query: Omit<AuditQuery, 'limit'>) => {
        await audit.page({ ...query, limit: 51 });
        const compiled = db.getExecutor().compileQuery(last!, { queryId: 'plan' } as never);
        const rows = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${compiled.sql}`, [...compiled.parameters]));
        return rows.rows.map((r) => r.detail).join('\n');
      };
      for (const query of [{ userId: 'u1' }, { userId: 'u1', types: ['token.issued', 'login.failed'] }, { userId: 'u1', before: { at: T0, id: 'f' } }]) {
        const detail = await plan(query);
        assert.match(detail, /USING INDEX audit_events_user_at \(user_id=\?/, detail);
        assert.match(detail, /USING INDEX audit_events_actor_at \(actor_id=\?/, detail);
        assert.doesNotMatch(detail, /SCAN audit_events\b/, detail);
      }
      assert.match(await plan({ types: ['token.issued', 'login.failed'] }), /^(?!.*SCAN audit_events\b)[\s\S]*audit_events_event_at \(event=\?\)[\s\S]*audit_events_event_at \(event=\?\)/);
    });

    test('the user and actor indexes leave out events without one (migration 017)', async () => {
      const sqlOf = async (name: string) => {
        const query =
          kind.name === 'sqlite'
            ? CompiledQuery.raw('select sql as definition from sqlite_master where name = ?', [name])
            : CompiledQuery.raw('select indexdef as definition from pg_indexes where indexname = $1', [name]);
        return (await harness.store.database.db.executeQuery<{ definition: string }>(query)).rows[0]?.definition ?? '';
      };
      assert.match(await sqlOf('audit_events_user_at'), /where\s+\(?"?user_id"?\s+is\s+not\s+null/i);
      assert.match(await sqlOf('audit_events_actor_at'), /where\s+\(?"?actor_id"?\s+is\s+not\s+null/i);
    });

    test('events of one millisecond come in the reverse order they were stamped; the keyset walks them one by one', async () => {
      const client = unique('client-');
      const ids = new AuditIds();
      const e = Array.from({ length: 7 }, () => anEvent({ at: T0 + 5, clientId: client }, ids));
      // Inserted shuffled: the order is the store's, not the insertion's.
      await harness.store.audit.insertMany([e[3]!, e[0]!, e[6]!, e[1]!, e[5]!, e[2]!, e[4]!]);
      const expected = e.map((r) => r.id).reverse();
      assert.deepEqual(await readAll(harness.store.audit, { clientId: client }, 1), expected);
      assert.deepEqual(await readAll(harness.store.audit, { clientId: client }, 3), expected);
    });

    test('paging is stable while other instances insert newer and same-millisecond events', async () => {
      const client = unique('client-');
      const ids = new AuditIds();
      const original = Array.from({ length: 60 }, (_, i) => anEvent({ at: T0 + 1000 + Math.floor(i / 3), clientId: client }, ids));
      await harness.store.audit.insertMany(original);
      const expected = original.map((r) => r.id).reverse();
      const seen: string[] = [];
      let before: AuditKey | undefined;
      let round = 0;
      for (;;) {
        assert.ok(round < 20, 'the keyset does not advance');
        const rows = await harness.store.audit.page({ clientId: client, before, limit: 7 });
        seen.push(...rows.map((r) => r.id));
        if (rows.length < 7) break;
        before = { at: rows[6]!.at, id: rows[6]!.id };
        // Between pages, two instances insert at once: newer events, and some in the last page's millisecond.
        const newer = Array.from({ length: 5 }, () => anEvent({ at: T0 + 5000 + round, clientId: client }));
        await Promise.all([other.audit.insertMany(newer), harness.store.audit.insertMany([anEvent({ at: T0 + 9000, clientId: client })])]);
        round++;
      }
      const fromOriginal = seen.filter((id) => expected.includes(id));
      assert.deepEqual(fromOriginal, expected, 'every original event exactly once, in order');
      assert.equal(seen.length, fromOriginal.length, 'and none of the newer ones (they sort before the cursor)');
    });

    test('concurrent batches from several instances all land, each id once', async () => {
      const client = unique('client-');
      const batches = Array.from({ length: 10 }, (_, b) => Array.from({ length: 20 }, () => anEvent({ at: T0 + 2000 + b, clientId: client })));
      await Promise.all(batches.map((batch, i) => (i % 2 === 0 ? harness.store : other).audit.insertMany(batch)));
      const all = await readAll(harness.store.audit, { clientId: client }, 200);
      assert.equal(all.length, 200);
      assert.equal(new Set(all).size, 200);
    });

    test('a batch is all or nothing: a duplicate id stores none of it', async () => {
      const client = unique('client-');
      const first = anEvent({ at: T0, clientId: client });
      await harness.store.audit.insertMany([first]);
      await assert.rejects(harness.store.audit.insertMany([anEvent({ at: T0 + 1, clientId: client }), { ...first }]));
      assert.equal((await harness.store.audit.page({ clientId: client, limit: 10 })).length, 1);
    });

    test('more than one statement holds (1500 events) is stored in one call', async () => {
      const client = unique('client-');
      const ids = new AuditIds();
      await harness.store.audit.insertMany(Array.from({ length: 1500 }, (_, i) => anEvent({ at: T0 + i, clientId: client }, ids)));
      assert.equal((await readAll(harness.store.audit, { clientId: client }, 200)).length, 1500);
    });
  });

  describe(`audit retention on ${kind.name}`, () => {
    test('deleteOlderThan deletes the oldest first, at most `limit`, never one at or after the cut-off; cleanUp drains by the retention', async () => {
      const harness = await openTestStore(kind);
      try {
        const { audit } = harness.store;
        const ids = new AuditIds();
        const old = Array.from({ length: 5 }, (_, i) => anEvent({ at: T0 + i, event: 'logout' }, ids));
        const kept = anEvent({ at: T0 + 5, event: 'logout' }, ids);
        await audit.insertMany([...old, kept]);
        assert.equal(await audit.deleteOlderThan(T0 + 5, 2), 2);
        assert.deepEqual((await audit.page({ limit: 10 })).map((r) => r.id), [kept, ...old.slice(2)].map((r) => r.id).sort().reverse(), 'the two oldest went');
        assert.equal(await audit.deleteOlderThan(T0 + 5, 100), 3);
        assert.equal(await audit.deleteOlderThan(T0 + 5, 100), 0);
        assert.deepEqual((await audit.page({ limit: 10 })).map((r) => r.id), [kept.id]);

        // The janitor: 90 days' retention, in batches of 2.
        const clock = new ManualClock(T0 + 100 * DAY);
        const older = Array.from({ length: 5 }, (_, i) => anEvent({ at: T0 + 100 * DAY - 90 * DAY - 1 - i }));
        const recent = anEvent({ at: T0 + 100 * DAY - 90 * DAY });
        await audit.insertMany([...older, recent]);
        const none = await cleanUp({ store: harness.store, clock }, { batchSize: 2 });
        assert.equal(none.auditEvents, 0, 'no retention: nothing goes');
        const report = await cleanUp({ store: harness.store, clock, auditRetentionMs: 90 * DAY }, { batchSize: 2 });
        assert.equal(report.auditEvents, 6, 'the 5 older, and the one left from above');
        assert.deepEqual((await audit.page({ limit: 10 })).map((r) => r.id), [recent.id]);
      } finally {
        await harness.close();
      }
    });
  });

  describe(`the batching audit sink over ${kind.name}`, () => {
    test('stamps events with the clock, stores them on flush with their fields split out, and logs a failed insert instead of throwing', async () => {
      const harness = await openTestStore(kind);
      try {
        const clock = new ManualClock(T0);
        const errors: { fields: object; message: string }[] = [];
        const sink = storeAuditSink(harness.store.audit, clock, { error: (fields, message) => errors.push({ fields, message }) });
        const userId = randomUUID();
        sink.emit({ event: 'user.created', userId, username: 'alice', actor: { via: 'manage-api', caller: 'admin-1', clientId: 'gatehouse-console' } });
        clock.advance(7);
        sink.emit({ event: 'token.issued', grantType: 'authorization_code', clientId: 'rp', userId, scope: 'openid', family: 'abc', accessToken: 'fp1', idToken: true, ip: '203.0.113.9' });
        assert.deepEqual(await harness.store.audit.page({ limit: 10 }), [], 'nothing written before the batch is due');
        await sink.flush();
        const rows = await harness.store.audit.page({ limit: 10 });
        assert.deepEqual(
          rows.map(({ id: _id, ...rest }) => rest),
          [
            { at: T0 + 7, event: 'token.issued', userId, clientId: 'rp', data: { grantType: 'authorization_code', scope: 'openid', family: 'abc', accessToken: 'fp1', idToken: true, ip: '203.0.113.9' } },
            { at: T0, event: 'user.created', userId, actorId: 'admin-1', data: { username: 'alice', actor: { via: 'manage-api', caller: 'admin-1', clientId: 'gatehouse-console' } } },
          ],
        );
        assert.deepEqual(errors, []);

        await harness.store.close();
        sink.emit({ event: 'logout', userId, session: 's', revoked: 0 });
        sink.emit({ event: 'logout', userId, session: 's', revoked: 0 });
        await sink.flush();
        const [failed, ...more] = errors as { fields: object; message: string }[];
        assert.equal(more.length, 0);
        assert.equal((failed!.fields as { count: number }).count, 2);
        assert.match(failed!.message, /could not store 2 audit event/);
      } finally {
        await harness.close();
      }
    });
  });
}
