/**
 * Sign-ins waiting for the second factor (PendingSignInStore, migration 023) on every database: a
 * pending sign-in is found until it expires and taken at most once, by one conditional DELETE,
 * whatever the race and on every instance (docs/decisions.md SA20); expired rows are cleaned up,
 * and a deleted user's go with the user.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { PendingSignIn } from '../../src/domain/pending-sign-in.ts';
import type { PendingSignInStore, Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aHash, aStoredUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 40;
const MINUTE = 60_000;

for (const kind of DATABASES) {
  describe(`pending sign-in store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    let pending: PendingSignInStore;
    /** Another instance's store on the same database. */
    let other: PendingSignInStore;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS / 2 });
      store = harness.store;
      pending = store.pendingSignIns;
      const second = await harness.open({ poolSize: RACERS / 2 });
      other = second.pendingSignIns;
      await Promise.all([warmUp(store, RACERS / 2), warmUp(second, RACERS / 2)]);
    });
    after(async () => harness.close());

    async function aPending(overrides: Partial<PendingSignIn> = {}): Promise<PendingSignIn> {
      const user = await aStoredUser(store);
      const row: PendingSignIn = { idHash: aHash(), userId: user.id, clientId: 'client-1', binding: aHash(), amr: ['pwd'], createdAt: T0, expiresAt: T0 + 5 * MINUTE, ...overrides };
      await pending.insert(row);
      return row;
    }

    test('found until it expires, on every instance; taken once, then gone', async () => {
      const row = await aPending();
      assert.deepEqual(await pending.find(row.idHash, T0), row);
      assert.deepEqual(await other.find(row.idHash, row.expiresAt - 1), row, 'another instance, just before it expires');
      assert.equal(await pending.find(row.idHash, row.expiresAt), undefined, 'expired at expiresAt');
      assert.equal(await other.take(row.idHash, row.expiresAt), undefined, 'an expired one cannot be taken');
      assert.deepEqual(await other.take(row.idHash, T0 + 1), row);
      assert.equal(await pending.take(row.idHash, T0 + 2), undefined, 'taken once');
      assert.equal(await pending.find(row.idHash, T0 + 2), undefined);
      assert.equal(await pending.take(aHash(), T0), undefined, 'an unknown one');
    });

    test(`${RACERS} concurrent takes of one pending sign-in on two instances: exactly one gets it`, async () => {
      // A find followed by a delete would let several racers see the row; the DELETE … RETURNING
      // is one statement, so exactly one wins on every database.
      for (let round = 0; round < 3; round++) {
        const row = await aPending();
        const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? pending : other).take(row.idHash, T0)));
        assert.equal(results.filter((r) => r !== undefined).length, 1, `round ${round}`);
      }
    });

    test('deleteExpired deletes exactly the rows expired at now, at most limit of them; a deleted user takes theirs along', async () => {
      const at = T0 + 1000 * MINUTE;
      // Other tests' rows expire long before `at`; clear them first so the counts are exact.
      while ((await pending.deleteExpired(at - 1, 1000)) > 0);
      const expired = [await aPending({ expiresAt: at }), await aPending({ expiresAt: at - 1 }), await aPending({ expiresAt: at })];
      const live = await aPending({ expiresAt: at + 1 });
      assert.equal(await pending.deleteExpired(at, 2), 2);
      assert.equal(await pending.deleteExpired(at, 1000), 1);
      assert.equal(await pending.deleteExpired(at, 1000), 0);
      assert.ok(await pending.find(live.idHash, at), 'the live one is kept');
      assert.equal(await pending.find(expired[0]!.idHash, T0), undefined);

      await store.users.delete(live.userId);
      assert.equal(await pending.find(live.idHash, at), undefined, 'deleted with its user');
    });
  });
}
