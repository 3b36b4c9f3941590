/**
 * The durable outbox (OutboxStore, migration 027) on every database: a message is written with
 * the unit of work that causes it and once per dedupe key; a claim leases each due message to
 * exactly one claimer, even with several instances claiming at once; a lease that expires lets
 * another take over, and the old holder's marks then change nothing; a dead message is
 * redelivered once (docs/decisions.md AM1–AM30).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { NewOutboxMessage } from '../../src/domain/outbox.ts';
import { ConflictError, type OutboxStore, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { openTestStore, T0, unique, warmUp, type TestStore } from '../helpers/store.ts';
import { cleanUp, OUTBOX_DEAD_RETENTION_MS, OUTBOX_DELIVERED_RETENTION_MS } from '../../src/oauth/cleanup.ts';
import { ManualClock } from '../../src/lib/clock.ts';

const INSTANCES = 4;
const RACERS_PER_INSTANCE = 5;
const MINUTE = 60_000;

function aMessage(overrides: Partial<NewOutboxMessage> = {}): NewOutboxMessage {
  return { id: randomUUID(), channel: 'mail', kind: 'mail.test', destination: `${unique('to')}@example.com`, payload: { subject: 'hello' }, dedupeKey: unique('key'), createdAt: T0, nextAttemptAt: T0, ...overrides };
}

for (const kind of DATABASES) {
  describe(`outbox store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    let outbox: OutboxStore;
    /** Other instances' stores on the same database. */
    let others: Store[];
    // Each test on a database of its own: no test claims another's messages.
    beforeEach(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS_PER_INSTANCE });
      store = harness.store;
      outbox = store.outbox;
      others = [];
      for (let i = 1; i < INSTANCES; i++) others.push(await harness.open({ poolSize: RACERS_PER_INSTANCE }));
      await Promise.all([store, ...others].map((s) => warmUp(s, RACERS_PER_INSTANCE)));
    });
    afterEach(async () => harness.close());

    const at = () => T0;

    test('written once per dedupe key, inside the unit of work that causes it, or not at all', async () => {
      const m = aMessage();
      assert.equal(await outbox.enqueue(m), true);
      assert.equal(await outbox.enqueue({ ...m, id: randomUUID() }), false, 'the same dedupe key again writes nothing');
      await assert.rejects(outbox.enqueue({ ...m, dedupeKey: unique('key') }), ConflictError, 'the same id with another key');
      assert.deepEqual(await outbox.get(m.id), { ...m, status: 'pending', attempts: 0, leaseOwner: undefined, leaseUntil: undefined, lastError: undefined, updatedAt: T0, deliveredAt: undefined });

      const rolledBack = aMessage();
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.outbox.enqueue(rolledBack);
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      assert.equal(await outbox.get(rolledBack.id), undefined, 'a unit of work that failed wrote no message');
      const committed = aMessage();
      assert.equal(await store.transaction((tx) => tx.outbox.enqueue(committed)), true);
      assert.equal((await outbox.get(committed.id))?.status, 'pending');
    });

    test('a claim leases due messages of its channels, counts an attempt, and holds them off other claims until the lease expires', async () => {
      const now = at();
      const due = aMessage({ createdAt: now, nextAttemptAt: now });
      const later = aMessage({ createdAt: now, nextAttemptAt: now + MINUTE });
      const webhook = aMessage({ channel: 'webhook', createdAt: now, nextAttemptAt: now });
      for (const m of [due, later, webhook]) await outbox.enqueue(m);
      const claim = { now, leaseMs: MINUTE, limit: 10, channels: ['mail'] as const };
      const first = await outbox.claim({ ...claim, owner: 'a' });
      assert.deepEqual(first.map((m) => [m.id, m.attempts, m.leaseOwner, m.leaseUntil]), [[due.id, 1, 'a', now + MINUTE]]);
      assert.deepEqual(await others[0]!.outbox.claim({ ...claim, owner: 'b', now: now + MINUTE - 1 }), [], 'leased: nobody else gets it');
      // `later` falls due meanwhile: b gets it, and the first once a's lease is over.
      const taken = await others[0]!.outbox.claim({ ...claim, owner: 'b', now: now + MINUTE });
      assert.deepEqual(taken.map((m) => [m.id, m.attempts, m.leaseOwner]), [[due.id, 2, 'b'], [later.id, 1, 'b']]);
      assert.equal(await outbox.markDelivered(due.id, 'a', now + MINUTE + 1), false, 'a lost its lease: its mark changes nothing');
      assert.equal(await outbox.markFailed(due.id, 'a', { now: now + MINUTE + 1, error: 'x', retryAt: now }), false);
      assert.equal(await others[0]!.outbox.markDelivered(due.id, 'b', now + MINUTE + 2), true);
      assert.equal(await others[0]!.outbox.markDelivered(due.id, 'b', now + MINUTE + 3), false, 'delivered once');
      const delivered = await outbox.get(due.id);
      assert.deepEqual([delivered?.status, delivered?.deliveredAt, delivered?.leaseOwner], ['delivered', now + MINUTE + 2, undefined]);
      assert.deepEqual(await outbox.claim({ ...claim, owner: 'c', now: now + 2 * MINUTE - 1 }), [], 'delivered is never claimed again; b still leases `later`');
      assert.deepEqual((await outbox.claim({ ...claim, channels: ['webhook'], owner: 'c' })).map((m) => m.id), [webhook.id], 'one channel only');
      assert.deepEqual((await outbox.claim({ ...claim, channels: ['mail'], owner: 'd', now: now + 3 * MINUTE, id: randomUUID() })), [], 'another id: none');
      assert.deepEqual((await outbox.claim({ ...claim, owner: 'd', now: now + 3 * MINUTE, id: later.id })).map((m) => m.id), [later.id], 'by id');
    });

    test('a failure retries later or goes dead; a dead message is redelivered once, with its attempts reset', async () => {
      const now = at();
      const m = aMessage({ createdAt: now, nextAttemptAt: now });
      await outbox.enqueue(m);
      const claim = { now, leaseMs: MINUTE, limit: 10, channels: ['mail'] as const, owner: 'a' };
      await outbox.claim(claim);
      assert.equal(await outbox.markFailed(m.id, 'a', { now: now + 1, error: '421 try later'.padEnd(900, '.'), retryAt: now + 5 * MINUTE }), true);
      let row = await outbox.get(m.id);
      assert.deepEqual([row?.status, row?.nextAttemptAt, row?.lastError?.length, row?.leaseOwner, row?.attempts], ['pending', now + 5 * MINUTE, 500, undefined, 1]);
      assert.deepEqual(await outbox.claim({ ...claim, now: now + 5 * MINUTE - 1, owner: 'b' }), [], 'not yet due');
      await outbox.claim({ ...claim, now: now + 5 * MINUTE, owner: 'b' });
      assert.equal(await outbox.redeliver(m.id, now), undefined, 'pending: nothing to redeliver');
      assert.equal(await outbox.markFailed(m.id, 'b', { now: now + 5 * MINUTE, error: '550 no such user', retryAt: undefined }), true);
      row = await outbox.get(m.id);
      assert.deepEqual([row?.status, row?.lastError, row?.attempts], ['dead', '550 no such user', 2]);
      assert.deepEqual(await outbox.claim({ ...claim, now: now + 60 * MINUTE, owner: 'c' }), [], 'dead is never claimed');
      const results = await Promise.all([outbox, ...others.map((s) => s.outbox)].map((o) => o.redeliver(m.id, now + 61 * MINUTE)));
      assert.equal(results.filter((r) => r !== undefined).length, 1, 'redelivered once');
      row = await outbox.get(m.id);
      assert.deepEqual([row?.status, row?.attempts, row?.nextAttemptAt, row?.lastError], ['pending', 0, now + 61 * MINUTE, '550 no such user']);
      assert.equal(await outbox.redeliver(randomUUID(), now), undefined, 'unknown');
    });

    test('pages newest first, by status, without shifting; counts by status', async () => {
      {
        const o = outbox;
        const ms = Array.from({ length: 5 }, (_, i) => aMessage({ createdAt: T0 + (i < 2 ? 0 : i), nextAttemptAt: T0 }));
        for (const m of ms) await o.enqueue(m);
        const [leased] = await o.claim({ owner: 'a', now: T0, leaseMs: MINUTE, limit: 1, channels: ['mail'] });
        await o.markFailed(leased!.id, 'a', { now: T0, error: 'gone', retryAt: undefined });
        const newestFirst = [...ms].sort((a, b) => b.createdAt - a.createdAt || (b.id < a.id ? -1 : 1)).map((m) => m.id);
        const first = await o.page({ limit: 3 });
        assert.deepEqual(first.map((m) => m.id), newestFirst.slice(0, 3));
        await o.enqueue(aMessage({ createdAt: T0 + 100 }));
        const last = first[2]!;
        assert.deepEqual((await o.page({ limit: 3, after: { createdAt: last.createdAt, id: last.id } })).map((m) => m.id), newestFirst.slice(3));
        assert.deepEqual((await o.page({ limit: 10, status: 'dead' })).map((m) => m.id), [leased!.id]);
        assert.deepEqual(await o.countByStatus(), { pending: 5, delivered: 0, dead: 1 });
      }
    });

    test('the cleanup job deletes delivered messages after a week and dead ones after a month, never a pending one', async () => {
      const [delivered, dead, pending, young] = [aMessage(), aMessage(), aMessage(), aMessage()];
      for (const m of [delivered, dead, pending, young]) await outbox.enqueue(m);
      await outbox.claim({ owner: 'a', now: T0, leaseMs: MINUTE, limit: 4, channels: ['mail'] });
      await outbox.markDelivered(delivered.id, 'a', T0);
      await outbox.markDelivered(young.id, 'a', T0 + 1);
      await outbox.markFailed(dead.id, 'a', { now: T0, error: 'gone', retryAt: undefined });
      await outbox.markFailed(pending.id, 'a', { now: T0, error: 'later', retryAt: T0 + 10 * 365 * 24 * 60 * MINUTE });
      const clock = new ManualClock(T0 + OUTBOX_DELIVERED_RETENTION_MS);
      assert.equal((await cleanUp({ store, clock })).outbox, 0, 'exactly a week: kept');
      clock.set(T0 + OUTBOX_DELIVERED_RETENTION_MS + 1);
      assert.equal((await cleanUp({ store, clock })).outbox, 1);
      assert.equal(await outbox.get(delivered.id), undefined);
      clock.set(T0 + OUTBOX_DEAD_RETENTION_MS + 2);
      assert.equal((await cleanUp({ store, clock })).outbox, 2, 'the dead one and the younger delivered one');
      assert.deepEqual((await outbox.page({ limit: 10 })).map((m) => [m.id, m.status]), [[pending.id, 'pending']]);
    });

    test(`${INSTANCES} instances claiming at once, ${RACERS_PER_INSTANCE} claims each: every message is claimed by exactly one`, async () => {
      const now = at();
      const messages = Array.from({ length: 60 }, () => aMessage({ createdAt: now, nextAttemptAt: now }));
      for (const m of messages) await outbox.enqueue(m);
      const instances = [store, ...others];
      const claims = await Promise.all(
        instances.flatMap((s, i) => Array.from({ length: RACERS_PER_INSTANCE }, (_, r) => s.outbox.claim({ owner: `${i}/${r}`, now, leaseMs: MINUTE, limit: 4, channels: ['mail'] }))),
      );
      // Then whatever is left, as the next ticks would take it.
      for (let round = 0; round < 20; round++) claims.push(await instances[round % INSTANCES]!.outbox.claim({ owner: `late/${round}`, now, leaseMs: MINUTE, limit: 10, channels: ['mail'] }));
      const ids = claims.flat().map((m) => m.id).filter((id) => messages.some((m) => m.id === id));
      assert.equal(ids.length, messages.length, 'no message claimed twice');
      assert.deepEqual(new Set(ids), new Set(messages.map((m) => m.id)), 'every message claimed');
      assert.ok(claims.slice(0, INSTANCES * RACERS_PER_INSTANCE).filter((c) => c.length > 0).length > 1, 'the claims were shared, not one claimer taking all');
    });
  });
}
