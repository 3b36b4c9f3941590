/**
 * Password reset links (PasswordResetStore, migration 028) and the conditional password write
 * they use (UserStore.replacePasswordHash) on every database: a link is found until it expires
 * and taken at most once, by one conditional DELETE, whatever the race and on every instance
 * (docs/decisions.md AM45); the password is replaced only while it is the one expected (AM42);
 * expired links are cleaned up, a user's links deleted together, and a deleted user's go with the user.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { PasswordReset, PasswordResetStore, Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aHash, aStoredUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 40;
const MINUTE = 60_000;

for (const kind of DATABASES) {
  describe(`password reset store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    let resets: PasswordResetStore;
    /** Another instance's store on the same database. */
    let other: Store;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS / 2 });
      store = harness.store;
      resets = store.passwordResets;
      other = await harness.open({ poolSize: RACERS / 2 });
      await Promise.all([warmUp(store, RACERS / 2), warmUp(other, RACERS / 2)]);
    });
    after(async () => harness.close());

    async function aReset(overrides: Partial<PasswordReset> = {}): Promise<PasswordReset> {
      const user = await aStoredUser(store);
      const row: PasswordReset = { tokenHash: aHash(), userId: user.id, passwordFingerprint: aHash(), createdAt: T0, expiresAt: T0 + 30 * MINUTE, ...overrides };
      await resets.insert(row);
      return row;
    }

    test('found until it expires, on every instance; taken once, then gone', async () => {
      const row = await aReset();
      assert.deepEqual(await resets.find(row.tokenHash, T0), row);
      assert.deepEqual(await other.passwordResets.find(row.tokenHash, row.expiresAt - 1), row);
      assert.equal(await resets.find(row.tokenHash, row.expiresAt), undefined, 'expired at expiresAt');
      assert.equal(await other.passwordResets.take(row.tokenHash, row.expiresAt), undefined, 'an expired one cannot be taken');
      assert.deepEqual(await other.passwordResets.take(row.tokenHash, T0 + 1), row);
      assert.equal(await resets.take(row.tokenHash, T0 + 2), undefined, 'taken once');
      assert.equal(await resets.take(aHash(), T0), undefined, 'an unknown one');
    });

    test(`${RACERS} takes of one link at once, on two instances: exactly one gets it`, async () => {
      const row = await aReset();
      const taken = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? resets : other.passwordResets).take(row.tokenHash, T0 + 1)));
      assert.equal(taken.filter((t) => t !== undefined).length, 1);
    });

    test("a user's links are deleted together; expired ones by the cleanup; a deleted user's with the user", async () => {
      const a = await aReset();
      await resets.insert({ ...a, tokenHash: aHash() });
      const b = await aReset({ expiresAt: T0 + 1 });
      assert.equal(await resets.deleteOfUser(a.userId), 2);
      assert.equal(await resets.find(a.tokenHash, T0), undefined);
      assert.equal(await resets.deleteExpired(T0 + 1, 100) >= 1, true);
      assert.equal(await resets.take(b.tokenHash, T0), undefined);
      const c = await aReset();
      await store.users.delete(c.userId);
      assert.equal(await resets.find(c.tokenHash, T0), undefined, 'gone with the user');
    });

    test('replacePasswordHash writes only while the hash is the one expected; none expected matches none', async () => {
      const user = await aStoredUser(store);
      const current = (await store.users.getCredentials(user.username))?.passwordHash;
      assert.equal(await store.users.replacePasswordHash(user.id, 'not-the-current-hash', 'x', T0), false);
      assert.equal(await store.users.replacePasswordHash(user.id, current, 'second', T0), true);
      assert.equal((await store.users.getCredentials(user.username))?.passwordHash, 'second');
      assert.equal(await store.users.replacePasswordHash(user.id, current, 'third', T0), false, 'the old hash no longer matches');
      const racing = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? store : other).users.replacePasswordHash(user.id, 'second', `racer-${i}`, T0)));
      assert.equal(racing.filter(Boolean).length, 1, 'one conditional write wins');
    });
  });
}
