import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { waitMs } from '../../src/oauth/throttling/policy.ts';
import type { ThrottleCounter, ThrottleRule, ThrottleStore } from '../../src/storage/ports.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES } from '../helpers/databases.ts';
import { openTestStore, T0, unique, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;
/** Concurrent reservations in the race tests. */
const RESERVERS = 24;
const MAX_DELAY = 900;
const HOUR = 3_600_000;

const byKey = (counters: ThrottleCounter[]) => Object.fromEntries(counters.map((c) => [c.key, c]));

for (const kind of DATABASES) {
  describe(`throttle store on ${kind.name}`, () => {
    let harness: TestStore;
    let throttling: ThrottleStore;
    /** Another instance's store on the same database. */
    let other: ThrottleStore;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RESERVERS });
      throttling = harness.store.throttling;
      const second = await harness.open({ poolSize: 12 });
      other = second.throttling;
      await Promise.all([warmUp(harness.store, RESERVERS), warmUp(second, 12)]);
    });

    /** Counters as rows, for states no sequence of calls reaches quickly. */
    const put = async (counter: ThrottleCounter, expiresAt = T0 + HOUR) => {
      const { key, failures, pending, lastFailureAt, reservedAt } = counter;
      await (harness.store as SqlStore).database.db
        .insertInto('throttle_counters')
        .values({ key, failures, pending, first_failure_at: lastFailureAt, last_failure_at: lastFailureAt, reserved_at: reservedAt, expires_at: expiresAt })
        .execute();
    };
    const rowsOf = async (keys: string[]) =>
      Number((await (harness.store as SqlStore).database.db.selectFrom('throttle_counters').select((eb) => eb.fn.countAll().as('n')).where('key', 'in', keys).executeTakeFirstOrThrow()).n);
    const reserve = (store: ThrottleStore, rules: ThrottleRule[], now = T0) => store.reserve(rules, MAX_DELAY, now, now + HOUR);
    after(async () => harness.close());

    test('recordFailure starts a counter at one and counts on; get sees it until it expires', async () => {
      const key = unique('k:');
      assert.deepEqual(await throttling.get([key], T0), []);
      assert.deepEqual(await throttling.recordFailure([key], T0, T0 + HOUR), [{ key, failures: 1, pending: 0, lastFailureAt: T0, reservedAt: 0 }]);
      assert.deepEqual(await throttling.recordFailure([key], T0 + 10, T0 + 10 + HOUR), [{ key, failures: 2, pending: 0, lastFailureAt: T0 + 10, reservedAt: 0 }]);
      assert.deepEqual(await other.get([key], T0 + 20), [{ key, failures: 2, pending: 0, lastFailureAt: T0 + 10, reservedAt: 0 }]);
      assert.deepEqual(await throttling.get([key], T0 + 10 + HOUR), [], 'expired at expiresAt');
    });

    test('several keys in one call, each counted once even when repeated; unknown keys are left out of get', async () => {
      const [a, b] = [unique('a:'), unique('b:')];
      await throttling.recordFailure([a], T0, T0 + HOUR);
      const counted = byKey(await throttling.recordFailure([b, a, b], T0 + 5, T0 + HOUR));
      assert.equal(Object.keys(counted).length, 2);
      assert.equal(counted[a]?.failures, 2);
      assert.equal(counted[b]?.failures, 1);
      const seen = byKey(await throttling.get([a, b, unique('none:')], T0 + 6));
      assert.deepEqual(Object.keys(seen).sort(), [a, b].sort());
      assert.deepEqual(await throttling.recordFailure([], T0, T0 + HOUR), []);
      assert.deepEqual(await throttling.get([], T0), []);
    });

    test('a failure after the counter expired starts it again from one', async () => {
      const key = unique('k:');
      await throttling.recordFailure([key], T0, T0 + 1000);
      await throttling.recordFailure([key], T0 + 1, T0 + 1001);
      assert.deepEqual(await throttling.recordFailure([key], T0 + 1001, T0 + 2001), [{ key, failures: 1, pending: 0, lastFailureAt: T0 + 1001, reservedAt: 0 }]);
    });

    test('clear forgets counters, and only those', async () => {
      const [a, b] = [unique('a:'), unique('b:')];
      await throttling.recordFailure([a, b], T0, T0 + HOUR);
      await throttling.clear([a]);
      assert.deepEqual((await throttling.get([a, b], T0)).map((c) => c.key), [b]);
      await throttling.clear([]);
      assert.equal((await throttling.recordFailure([a], T0, T0 + HOUR))[0]?.failures, 1);
    });

    test(`${RACERS} concurrent failures on two instances lose no count, and each sees a distinct number`, async () => {
      const [key, shared] = [unique('race:'), unique('race-shared:')];
      const results = await Promise.all(
        Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? throttling : other).recordFailure(i % 3 === 0 ? [shared, key] : [key, shared], T0 + i, T0 + HOUR)),
      );
      const seen = results.map((r) => byKey(r)[key]!.failures).sort((x, y) => x - y);
      assert.deepEqual(seen, Array.from({ length: RACERS }, (_, i) => i + 1));
      assert.equal(byKey(await throttling.get([key, shared], T0 + RACERS))[shared]?.failures, RACERS);
    });

    test('reserve counts an attempt in flight under every key; failReservation makes it a failure dated from the reservation', async () => {
      const [a, b] = [unique('a:'), unique('b:')];
      const granted = await reserve(throttling, [{ key: b, threshold: 5 }, { key: a, threshold: 5 }], T0);
      assert.equal(granted.granted, true);
      assert.deepEqual(byKey(granted.counters), {
        [a]: { key: a, failures: 0, pending: 1, lastFailureAt: T0, reservedAt: T0 },
        [b]: { key: b, failures: 0, pending: 1, lastFailureAt: T0, reservedAt: T0 },
      });
      await reserve(throttling, [{ key: a, threshold: 5 }], T0 + 10);
      assert.deepEqual(await throttling.failReservation([a, b], T0, T0 + 50, T0 + 50 + HOUR), [
        ...[a, b].sort().map((key) => (key === a ? { key, failures: 1, pending: 1, lastFailureAt: T0, reservedAt: T0 + 10 } : { key, failures: 1, pending: 0, lastFailureAt: T0, reservedAt: T0 })),
      ].sort((x, y) => (x.key < y.key ? -1 : 1)));
      assert.deepEqual(await other.get([a], T0 + 60), [{ key: a, failures: 1, pending: 1, lastFailureAt: T0, reservedAt: T0 + 10 }]);
    });

    test('reserve refuses while a key waits, and then counts nothing under any key', async () => {
      const [ip, pair, user] = [unique('ip:'), unique('pair:'), unique('user:')];
      const rules: ThrottleRule[] = [{ key: ip, threshold: 3 }, { key: pair, threshold: 5 }, { key: user, threshold: 5 }];
      for (let i = 0; i < 3; i += 1) assert.equal((await reserve(throttling, [{ key: ip, threshold: 3 }], T0)).granted, true);
      const refused = await reserve(throttling, rules, T0 + 999);
      assert.equal(refused.granted, false);
      assert.deepEqual(refused.counters, [{ key: ip, failures: 0, pending: 3, lastFailureAt: T0, reservedAt: T0 }], 'the counters, read for Retry-After');
      assert.equal(await rowsOf([pair, user]), 0, 'no row for the keys that would have allowed it');
      // The wait (1 s from the latest reservation) over, the next reservation goes through.
      assert.equal((await reserve(throttling, rules, T0 + 1000)).granted, true);
      assert.deepEqual((await throttling.get([ip, pair, user], T0 + 1000)).map((c) => [c.key, c.pending]).sort(), [[ip, 4], [pair, 1], [user, 1]].sort());
    });

    test('a reservation that fills its keys still counts every key (decided on the counters as they were)', async () => {
      const [a, b, c] = [unique('a:'), unique('b:'), unique('c:')];
      const result = await reserve(throttling, [{ key: a, threshold: 1 }, { key: b, threshold: 1, onlyWhenCounted: a }, { key: c, threshold: 1 }]);
      assert.equal(result.granted, true);
      assert.deepEqual(result.counters.map((x) => [x.key, x.pending]).sort(), [[a, 1], [b, 1], [c, 1]].sort());
      assert.equal((await reserve(throttling, [{ key: c, threshold: 1 }])).granted, false);
    });

    test('onlyWhenCounted: a waiting key refuses only when the other key counts a failure or an attempt in flight', async () => {
      const user = unique('user:');
      await put({ key: user, failures: 5, pending: 0, lastFailureAt: T0, reservedAt: 0 });
      const [fresh, failed, inFlight] = [unique('pair:'), unique('pair:'), unique('pair:')];
      await put({ key: failed, failures: 1, pending: 0, lastFailureAt: T0 - HOUR / 2, reservedAt: 0 });
      await put({ key: inFlight, failures: 0, pending: 1, lastFailureAt: T0 - HOUR / 2, reservedAt: T0 - HOUR / 2 });
      const attempt = (pair: string) => reserve(throttling, [{ key: pair, threshold: 5 }, { key: user, threshold: 5, onlyWhenCounted: pair }], T0 + 1);
      assert.equal((await attempt(fresh)).granted, true);
      assert.equal((await attempt(failed)).granted, false);
      assert.equal((await attempt(inFlight)).granted, false);
      // Without the condition the username's wait refuses everyone.
      assert.equal((await reserve(throttling, [{ key: user, threshold: 5 }], T0 + 1)).granted, false);
    });

    test('releaseReservation takes one attempt away, keeps the failures, and deletes a counter left empty', async () => {
      const [kept, emptied] = [unique('kept:'), unique('empty:')];
      await put({ key: kept, failures: 2, pending: 0, lastFailureAt: T0, reservedAt: 0 });
      await reserve(throttling, [{ key: kept, threshold: 5 }, { key: emptied, threshold: 5 }], T0 + 10);
      await throttling.releaseReservation([kept, emptied]);
      assert.deepEqual(await throttling.get([kept, emptied], T0 + 20), [{ key: kept, failures: 2, pending: 0, lastFailureAt: T0, reservedAt: T0 + 10 }]);
      assert.equal(await rowsOf([emptied]), 0);
      // Nothing pending: nothing to take away, and no count goes below zero.
      await throttling.releaseReservation([kept, unique('none:')]);
      assert.deepEqual((await throttling.get([kept], T0 + 20))[0]?.pending, 0);
    });

    test('an expired counter starts again from zero when reserved', async () => {
      const key = unique('k:');
      await put({ key, failures: 40, pending: 2, lastFailureAt: T0, reservedAt: T0 }, T0 + 1000);
      const result = await reserve(throttling, [{ key, threshold: 5 }], T0 + 1000);
      assert.deepEqual(result, { granted: true, counters: [{ key, failures: 0, pending: 1, lastFailureAt: T0 + 1000, reservedAt: T0 + 1000 }] });
    });

    test('the database decides as policy.ts waitMs does: thresholds, doubling, the cap, pending attempts and their time', async () => {
      const cases: [failures: number, pending: number, lastFailureAt: number, reservedAt: number, now: number][] = [
        [4, 0, T0, 0, T0], // below the threshold
        [5, 0, T0, 0, T0 + 999], // 1 s
        [5, 0, T0, 0, T0 + 1000],
        [6, 0, T0, 0, T0 + 1999], // 2 s
        [6, 0, T0, 0, T0 + 2000],
        [3, 2, T0, T0 + 5000, T0 + 3000], // reaches 5 with 2 in flight: 1 s from the reservation
        [3, 2, T0, T0 + 5000, T0 + 6000],
        [5, 0, T0 + 5000, T0 + 9000, T0 + 5500], // nothing in flight: the reservation time is no longer counted
        [5, 0, T0 + 5000, T0 + 9000, T0 + 6000],
        [14, 0, T0, 0, T0 + 511_999], // 2^9 = 512 s
        [14, 0, T0, 0, T0 + 512_000],
        [15, 0, T0, 0, T0 + 899_999], // 2^10 capped at 900 s
        [15, 0, T0, 0, T0 + 900_000],
        [40, 3, T0, T0, T0 + 899_999], // far past the cap, no overflow
        [40, 3, T0, T0, T0 + 900_000],
      ];
      for (const [failures, pending, lastFailureAt, reservedAt, now] of cases) {
        const key = unique('case:');
        const counter = { key, failures, pending, lastFailureAt, reservedAt };
        await put(counter, T0 + 10 * HOUR);
        const expected = waitMs(counter, 5, MAX_DELAY, now) === 0;
        assert.equal((await reserve(throttling, [{ key, threshold: 5 }], now)).granted, expected, JSON.stringify({ failures, pending, lastFailureAt: lastFailureAt - T0, reservedAt: reservedAt - T0, now: now - T0 }));
      }
    });

    for (const instances of [1, 2]) {
      const on = (i: number) => (instances === 2 && i % 2 === 1 ? other : throttling);

      test(`${RESERVERS} concurrent reservations of one key on ${instances} instance(s): exactly the threshold's number are granted`, async () => {
        const [ip, pair, user] = [unique('ip:'), unique('pair:'), unique('user:')];
        const rules: ThrottleRule[] = [{ key: user, threshold: 5, onlyWhenCounted: pair }, { key: ip, threshold: 8 }, { key: pair, threshold: 5 }];
        const results = await Promise.all(Array.from({ length: RESERVERS }, (_, i) => reserve(on(i), i % 2 === 0 ? rules : [...rules].reverse(), T0)));
        assert.equal(results.filter((r) => r.granted).length, 5);
        // Each granted one was counted before the next was decided: distinct counts 1..5.
        const seen = results.filter((r) => r.granted).map((r) => byKey(r.counters)[pair]!.pending);
        assert.deepEqual(seen.sort((x, y) => x - y), [1, 2, 3, 4, 5]);
        // The refused ones left no increment on the address, whose own threshold was not reached.
        assert.deepEqual((await throttling.get([ip, pair, user], T0)).map((c) => [c.key, c.pending]).sort(), [[ip, 5], [pair, 5], [user, 5]].sort());
      });

      test(`${RESERVERS} concurrent reservations from one address on ${instances} instance(s), each for another username: the address refuses first, no row for the rest`, async () => {
        const ip = unique('ip:');
        const attempts = Array.from({ length: RESERVERS }, () => ({ pair: unique('pair:'), user: unique('user:') }));
        const results = await Promise.all(
          attempts.map(({ pair, user }, i) => reserve(on(i), [{ key: ip, threshold: 8 }, { key: pair, threshold: 5 }, { key: user, threshold: 5, onlyWhenCounted: pair }], T0)),
        );
        assert.equal(results.filter((r) => r.granted).length, 8);
        assert.equal(await rowsOf([ip, ...attempts.flatMap((a) => [a.pair, a.user])]), 1 + 2 * 8);
        assert.equal((await throttling.get([ip], T0))[0]?.pending, 8);
      });

      test(`${RESERVERS} concurrent reservations while failures and releases of earlier attempts land, on ${instances} instance(s): never more in flight than allowed`, async () => {
        const [ip, pair] = [unique('ip:'), unique('pair:')];
        const rules: ThrottleRule[] = [{ key: ip, threshold: 50 }, { key: pair, threshold: 5 }];
        // Two attempts already in flight: one will fail, one will succeed.
        for (let i = 0; i < 2; i += 1) assert.equal((await reserve(throttling, rules, T0)).granted, true);
        const [results] = await Promise.all([
          Promise.all(Array.from({ length: RESERVERS }, (_, i) => reserve(on(i), rules, T0 + 1))),
          throttling.failReservation([ip, pair], T0, T0 + 1, T0 + 1 + HOUR),
          other.releaseReservation([ip, pair]),
        ]);
        // Whatever the order: one failure and one release of the two leave room for 4 or, before they land, 3.
        const granted = results.filter((r) => r.granted).length;
        assert.ok(granted === 3 || granted === 4, `granted ${granted}`);
        const [counter] = await throttling.get([pair], T0 + 1);
        assert.equal(counter!.failures + counter!.pending, 1 + granted);
        assert.ok(counter!.failures + counter!.pending <= 5);
      });
    }

    test('deleteExpired removes expired counters in batches, never live ones', async () => {
      const expired = Array.from({ length: 5 }, () => unique('old:'));
      const live = unique('live:');
      await throttling.recordFailure(expired, T0, T0 + 1000);
      await throttling.recordFailure([live], T0, T0 + HOUR);
      let deleted = 0;
      for (let pass = 0; pass < 10; pass += 1) {
        const n = await throttling.deleteExpired(T0 + 1000, 2);
        assert.ok(n <= 2);
        deleted += n;
        if (n === 0) break;
      }
      assert.ok(deleted >= 5, `deleted ${deleted}`);
      assert.deepEqual((await throttling.get([live], T0 + 1000)).map((c) => c.key), [live]);
      assert.deepEqual(await throttling.recordFailure([expired[0]!], T0 + 2000, T0 + HOUR), [{ key: expired[0], failures: 1, pending: 0, lastFailureAt: T0 + 2000, reservedAt: 0 }]);
    });
  });
}
