import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ThrottleCounter, ThrottleStore } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { openTestStore, T0, unique, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;
const HOUR = 3_600_000;

const byKey = (counters: ThrottleCounter[]) => Object.fromEntries(counters.map((c) => [c.key, c]));

for (const kind of DATABASES) {
  describe(`throttle store on ${kind.name}`, () => {
    let harness: TestStore;
    let throttling: ThrottleStore;
    /** Another instance's store on the same database. */
    let other: ThrottleStore;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS });
      throttling = harness.store.throttling;
      const second = await harness.open({ poolSize: 10 });
      other = second.throttling;
      await Promise.all([warmUp(harness.store, RACERS), warmUp(second, 10)]);
    });
    after(async () => harness.close());

    test('recordFailure starts a counter at one and counts on; get sees it until it expires', async () => {
      const key = unique('k:');
      assert.deepEqual(await throttling.get([key], T0), []);
      assert.deepEqual(await throttling.recordFailure([key], T0, T0 + HOUR), [{ key, failures: 1, lastFailureAt: T0 }]);
      assert.deepEqual(await throttling.recordFailure([key], T0 + 10, T0 + 10 + HOUR), [{ key, failures: 2, lastFailureAt: T0 + 10 }]);
      assert.deepEqual(await other.get([key], T0 + 20), [{ key, failures: 2, lastFailureAt: T0 + 10 }]);
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
      assert.deepEqual(await throttling.recordFailure([key], T0 + 1001, T0 + 2001), [{ key, failures: 1, lastFailureAt: T0 + 1001 }]);
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
      assert.deepEqual(await throttling.recordFailure([expired[0]!], T0 + 2000, T0 + HOUR), [{ key: expired[0], failures: 1, lastFailureAt: T0 + 2000 }]);
    });
  });
}
