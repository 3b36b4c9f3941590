/**
 * The batching audit sink without a database: when it writes (a full batch at once, else after
 * FLUSH_MS, on the test's mocked timers), that `emit` never throws or waits, the bound on what it
 * buffers, the tee's order, the ids, and that no credential-looking field is kept in full.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { ManualClock } from '../lib/clock.ts';
import type { AuditRecord } from '../storage/ports.ts';
import { fingerprint, type AuditEvent } from './audit.ts';
import { AuditIds, FLUSH_MS, MAX_BATCH, storeAuditSink, teeAuditSink, toRecord } from './audit-store-sink.ts';

const logout = (i: number): AuditEvent => ({ event: 'logout', userId: `u${i}`, session: 's', revoked: 0 });

/** Lets resolved promises and their continuations run (setImmediate is not mocked: no time passes). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

class FakeStore {
  readonly batches: AuditRecord[][] = [];
  fail = false;
  async insertMany(events: readonly AuditRecord[]): Promise<void> {
    if (this.fail) throw new Error('the database is down');
    this.batches.push([...events]);
  }
}

describe('the batching audit sink', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  test(`writes a full batch of ${MAX_BATCH} at once in one insert, the rest after ${FLUSH_MS} ms`, async () => {
    const store = new FakeStore();
    const sink = storeAuditSink(store, new ManualClock(), { error: () => assert.fail('no error expected') });
    for (let i = 0; i < MAX_BATCH + 3; i++) sink.emit(logout(i));
    await settled();
    assert.deepEqual(store.batches.map((b) => b.length), [MAX_BATCH], 'the full batch went at once, the rest waits');
    mock.timers.tick(FLUSH_MS);
    await settled();
    assert.deepEqual(store.batches.map((b) => b.length), [MAX_BATCH, 3]);
    await sink.flush();
    assert.equal(store.batches.length, 2, 'nothing was left');
  });

  test(`a lone event waits ${FLUSH_MS} ms, not longer`, async () => {
    const store = new FakeStore();
    const sink = storeAuditSink(store, new ManualClock(), { error: () => {} });
    sink.emit(logout(1));
    mock.timers.tick(FLUSH_MS - 1);
    await settled();
    assert.equal(store.batches.length, 0);
    mock.timers.tick(1);
    await settled();
    assert.deepEqual(store.batches.map((b) => b.map((r) => r.userId)), [['u1']]);
  });

  test('a failed insert is logged with its count and never reaches the caller; later batches still go', async () => {
    const store = new FakeStore();
    const errors: { count?: number }[] = [];
    const sink = storeAuditSink(store, new ManualClock(), { error: (fields) => errors.push(fields as { count?: number }) });
    store.fail = true;
    sink.emit(logout(1));
    sink.emit(logout(2));
    await sink.flush();
    assert.deepEqual(errors.map((e) => e.count), [2]);
    store.fail = false;
    sink.emit(logout(3));
    await sink.flush();
    assert.deepEqual(store.batches.map((b) => b.length), [1]);
  });

  test('beyond maxBuffered events waiting for a store that does not answer, new ones are dropped and counted', async () => {
    const waiting: (() => void)[] = [];
    const written: number[] = [];
    const stuck = { insertMany: (events: readonly AuditRecord[]) => new Promise<void>((resolve) => waiting.push(resolve)).then(() => void written.push(events.length)) };
    const errors: { count?: number }[] = [];
    const sink = storeAuditSink(stuck, new ManualClock(), { error: (fields) => errors.push(fields as { count?: number }) }, { maxBatch: 2, maxBuffered: 5 });
    for (let i = 1; i <= 9; i++) sink.emit(logout(i)); // [1,2] [3,4] go to the store, which hangs; 5 waits; 6..9 dropped
    const flushed = sink.flush();
    assert.deepEqual(errors.map((e) => e.count), [4]);
    while (written.length < 3) {
      await settled();
      waiting.shift()?.();
    }
    await flushed;
    assert.deepEqual(written, [2, 2, 1]);
    sink.emit(logout(10));
    assert.equal(errors.length, 1, 'room again once written');
  });

  test('an event keeps the time it was emitted at and its place in the order, though its record is made when the batch is written', async () => {
    const store = new FakeStore();
    const clock = new ManualClock();
    const sink = storeAuditSink(store, clock, { error: () => assert.fail('no error expected') });
    const emittedAt: number[] = [];
    for (let i = 0; i < 600; i++) {
      // 600 events over 3 ms: more than one draw of the id pool, several events per millisecond.
      if (i % 200 === 0) clock.advance(1);
      emittedAt.push(clock.now());
      sink.emit(logout(i));
    }
    clock.advance(60_000);
    await sink.flush();
    const records = store.batches.flat();
    assert.deepEqual(records.map((r) => r.at), emittedAt, 'the emit time, not the write time');
    assert.deepEqual(records.map((r) => r.userId), emittedAt.map((_, i) => `u${i}`));
    const ids = records.map((r) => r.id);
    assert.deepEqual([...ids].sort(), ids, 'ids sort in emit order');
    assert.equal(new Set(ids).size, 600);
    assert.equal(new Set(ids.map((id) => id.slice(19))).size, 600, 'each id has random bits of its own, across draws of the pool');
  });

  test('the tee writes the file or log copy first, then the store', () => {
    const order: string[] = [];
    teeAuditSink({ emit: () => order.push('file') }, { emit: () => order.push('store') }).emit(logout(1));
    assert.deepEqual(order, ['file', 'store']);
  });
});

describe('stored audit records', () => {
  test('a field named like a credential holding more than a fingerprint is kept as its fingerprint', () => {
    const raw = 'eyJhbGciOiJSUzI1NiJ9.a-whole-access-token';
    const event = { event: 'token.revoked', clientId: 'c', kind: 'access_token', token: raw, family: 'f', revoked: 1, accessToken: raw, clientSecret: raw, password: raw, userCode: 'WDJB-MJHT-long', codeClientId: 'a-client-id-longer-than-12' } as unknown as AuditEvent;
    const record = toRecord(event, 1, 'id');
    for (const key of ['token', 'accessToken', 'clientSecret', 'password']) assert.equal(record.data[key], fingerprint(raw), key);
    assert.equal(record.data.userCode, fingerprint('WDJB-MJHT-long'));
    assert.equal(record.data.codeClientId, 'a-client-id-longer-than-12', 'a client id is not a credential');
    // The id of an initial access token names it without being it (issue 22, item 5): kept.
    const registered = toRecord({ event: 'client.registered', clientId: 'c', initialAccessTokenId: '0f9c2f4e-8c1d-4a55-9d3c-2b3c4d5e6f70', actor: { via: 'dcr', clientId: 'c' } }, 1, 'id');
    assert.deepEqual(registered.data, { initialAccessTokenId: '0f9c2f4e-8c1d-4a55-9d3c-2b3c4d5e6f70', actor: { via: 'dcr', clientId: 'c' } });
    assert.ok(!JSON.stringify(record).includes(raw));
    // What events carry today, fingerprints, is kept as is.
    assert.equal(toRecord({ ...event, token: fingerprint(raw) } as AuditEvent, 1, 'id').data.token, fingerprint(raw));
  });

  test('ids are UUIDv7 of the time, ordered like the events within one millisecond, unique', () => {
    const ids = new AuditIds();
    const at = Date.UTC(2026, 10, 24, 18, 0, 0, 123);
    const same = Array.from({ length: 50 }, () => ids.next(at));
    assert.deepEqual([...same].sort(), same);
    assert.equal(new Set(same).size, 50);
    assert.match(same[0]!, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(parseInt(same[0]!.replace(/-/g, '').slice(0, 12), 16), at);
    assert.ok(ids.next(at + 1) > same[49]!);
  });
});
