/**
 * The rate limit's counters (RateLimitStore.take) on every database: a fixed window that counts
 * hits up to a limit and refuses the rest in one conditional upsert, shared by every instance, and
 * never pushed past its limit by a race.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RateLimitStore } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { openTestStore, T0, unique, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 40;
const MINUTE = 60_000;

for (const kind of DATABASES) {
  describe(`rate-limit store on ${kind.name}`, () => {
    let harness: TestStore;
    let limits: RateLimitStore;
    /** Another instance's store on the same database. */
    let other: RateLimitStore;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS / 2 });
      limits = harness.store.rateLimits;
      const second = await harness.open({ poolSize: RACERS / 2 });
      other = second.rateLimits;
      await Promise.all([warmUp(harness.store, RACERS / 2), warmUp(second, RACERS / 2)]);
    });
    after(async () => harness.close());

    test('counts up to the limit, then refuses until the window ends; the window does not slide', async () => {
      const key = unique('sso-session:');
      const hits = [];
      for (let i = 0; i < 5; i++) hits.push(await limits.take([{ key, limit: 3 }], T0 + i, T0 + MINUTE));
      assert.deepEqual(hits, [[{ key, hits: 1 }], [{ key, hits: 2 }], [{ key, hits: 3 }], [], []]);
      assert.deepEqual(await other.take([{ key, limit: 3 }], T0 + MINUTE - 1, T0 + 2 * MINUTE), [], 'the refusals did not move the window');
      assert.deepEqual(await other.take([{ key, limit: 3 }], T0 + MINUTE, T0 + 2 * MINUTE), [{ key, hits: 1 }], 'a new window at its end');
      assert.deepEqual(await limits.take([], T0, T0 + MINUTE), []);
    });

    test('two budgets in one call: each counts on its own, and a full one is left out of the answer', async () => {
      const [session, address] = [unique('sso-session:'), unique('sso-ip:')];
      assert.deepEqual(await limits.take([{ key: session, limit: 1 }, { key: address, limit: 5 }], T0, T0 + MINUTE), [
        { key: address, hits: 1 },
        { key: session, hits: 1 },
      ].sort((a, b) => (a.key < b.key ? -1 : 1)));
      // The session is full: refused, and not counted against the address either (one session
      // hammering must not use up its neighbours' budget).
      assert.deepEqual(await limits.take([{ key: session, limit: 1 }, { key: address, limit: 5 }], T0 + 1, T0 + MINUTE), []);
      const next = unique('sso-session:');
      assert.deepEqual(await limits.take([{ key: next, limit: 5 }, { key: address, limit: 2 }], T0 + 2, T0 + MINUTE), [
        { key: address, hits: 2 },
        { key: next, hits: 1 },
      ].sort((a, b) => (a.key < b.key ? -1 : 1)));
      // The address is full now: another session's request is refused and counts nowhere.
      assert.deepEqual(await limits.take([{ key: next, limit: 5 }, { key: address, limit: 2 }], T0 + 3, T0 + MINUTE), []);
      assert.deepEqual(await limits.take([{ key: next, limit: 5 }], T0 + 4, T0 + MINUTE), [{ key: next, hits: 2 }]);
    });

    test(`${RACERS} concurrent takes on two instances: exactly the limit of them counted, each a distinct count`, async () => {
      // A read-then-write limiter lets several racers read the same count and all pass: on
      // PostgreSQL with 40 racers over 40 connections it overshoots (tested with a SELECT-then-UPSERT).
      for (let trial = 0; trial < 5; trial++) {
        const key = unique('sso-session:');
        const limit = 7;
        const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? limits : other).take([{ key, limit }], T0 + 1, T0 + MINUTE)));
        const counted = results.filter((r) => r.length === 1).map((r) => r[0]!.hits);
        assert.deepEqual(
          counted.sort((a, b) => a - b),
          [1, 2, 3, 4, 5, 6, 7],
          `trial ${trial}`,
        );
      }
    });
  });
}
