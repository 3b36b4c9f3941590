/**
 * Used client-assertion jtis (AssertionStore, migration 009) on every database: a key is taken
 * once until it expires, by one atomic insert-if-absent, shared by every instance; never twice,
 * whatever the race (RFC 7523 §3 item 7).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AssertionStore } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { openTestStore, T0, unique, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 40;
const MINUTE = 60_000;

for (const kind of DATABASES) {
  describe(`assertion store on ${kind.name}`, () => {
    let harness: TestStore;
    let assertions: AssertionStore;
    /** Another instance's store on the same database. */
    let other: AssertionStore;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS / 2 });
      assertions = harness.store.assertions;
      const second = await harness.open({ poolSize: RACERS / 2 });
      other = second.assertions;
      await Promise.all([warmUp(harness.store, RACERS / 2), warmUp(second, RACERS / 2)]);
    });
    after(async () => harness.close());

    test('a key is taken once until it expires, on every instance; then it may be taken again', async () => {
      const key = unique('jti:');
      assert.equal(await assertions.useOnce(key, T0 + MINUTE, T0), true);
      assert.equal(await assertions.useOnce(key, T0 + MINUTE, T0 + 1), false, 'the same instance');
      assert.equal(await other.useOnce(key, T0 + 2 * MINUTE, T0 + MINUTE - 1), false, 'another instance, just before it expires');
      // The refusal changed nothing: the key still expires at T0 + MINUTE.
      assert.equal(await other.useOnce(key, T0 + 2 * MINUTE, T0 + MINUTE), true, 'expired: taken again');
      assert.equal(await assertions.useOnce(key, T0 + 3 * MINUTE, T0 + MINUTE + 1), false, 'and kept until its new expiry');
      assert.equal(await assertions.useOnce(unique('jti:'), T0 + MINUTE, T0), true, 'another key is another key');
    });

    test('deleteExpired deletes exactly the keys expired at now, at most limit of them', async () => {
      const at = T0 + 1000 * MINUTE;
      const expired = [unique('jti:'), unique('jti:'), unique('jti:')];
      const live = unique('jti:');
      for (const key of expired) assert.equal(await assertions.useOnce(key, at, T0), true);
      assert.equal(await assertions.useOnce(live, at + 1, T0), true);
      // Other tests' keys expire long before `at`; clear them first so the counts are exact.
      while ((await assertions.deleteExpired(at - 1, 1000)) > 0);
      assert.equal(await assertions.deleteExpired(at, 2), 2);
      assert.equal(await assertions.deleteExpired(at, 1000), 1);
      assert.equal(await assertions.deleteExpired(at, 1000), 0);
      assert.equal(await assertions.useOnce(live, at + 2, at), false, 'the live key was kept');
      assert.equal(await assertions.useOnce(expired[0]!, at + 2, at), true, 'a deleted key is free');
    });

    test(`${RACERS} concurrent uses of one key on two instances: exactly one succeeds`, async () => {
      // A look-up followed by an insert would let several racers see the key absent; the insert
      // with its conflict rule is one statement, so exactly one wins on every database.
      for (let round = 0; round < 3; round++) {
        const key = unique('jti:');
        const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? assertions : other).useOnce(key, T0 + MINUTE, T0)));
        assert.equal(results.filter(Boolean).length, 1, `round ${round}: ${results.filter(Boolean).length} winners`);
      }
    });

    test(`${RACERS} concurrent re-uses of one expired key: exactly one takes it again`, async () => {
      const key = unique('jti:');
      assert.equal(await assertions.useOnce(key, T0 + MINUTE, T0), true);
      const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? assertions : other).useOnce(key, T0 + 3 * MINUTE, T0 + 2 * MINUTE)));
      assert.equal(results.filter(Boolean).length, 1);
    });
  });
}
