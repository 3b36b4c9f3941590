/**
 * Store.transaction: a unit of work commits all or nothing, and overlapping units behave as if
 * they ran one after the other — from one store and from two (two instances' connections).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Token } from '../../src/domain/grant.ts';
import type { Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aHash, aSessionIndex, aStoredUser, aToken, aUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

/** Trials of the overlapping units below; READ COMMITTED lost the race in most of them on PostgreSQL. */
const TRIALS = 40;

for (const kind of DATABASES) {
  describe(`units of work on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    let other: Store;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: 10 });
      store = harness.store;
      other = await harness.open({ poolSize: 10 });
      await Promise.all([warmUp(store, 10), warmUp(other, 10)]);
    });
    after(async () => harness.close());

    test('every change of a unit is committed together and its result returned', async () => {
      const user = await aStoredUser(store);
      const a = aToken({ userId: user.id });
      const b = aToken({ userId: user.id, kind: 'refresh_token' });
      const result = await store.transaction(async (tx) => {
        await tx.tokens.insert(a);
        await tx.tokens.insert(b);
        return 'done';
      });
      assert.equal(result, 'done');
      assert.deepEqual(await store.tokens.find(a.tokenHash), a);
      assert.deepEqual(await store.tokens.find(b.tokenHash), b);
    });

    test('a unit that throws leaves nothing behind, including what a store method did in a transaction of its own', async () => {
      const token = aToken();
      const user = aUser({ attributes: { colour: ['blue'] } });
      const failure = new Error('changed my mind');
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.users.insert(user, undefined);
          await tx.tokens.insert(token);
          assert.equal((await tx.users.get(user.id))?.username, user.username, 'the unit sees its own writes');
          throw failure;
        }),
        (error) => error === failure,
      );
      assert.equal(await store.tokens.find(token.tokenHash), undefined);
      assert.equal(await store.users.get(user.id), undefined);
    });

    test('a unit reads a state and writes on its strength without being overtaken (a rotation racing a revocation of its session)', async () => {
      // Unit A rotates a refresh token and stores its successor in the same session; unit B
      // revokes every token of that session. Run one after the other, either order leaves no live
      // token in the session. Under READ COMMITTED, B's UPDATE waits for A's lock on the old
      // token, then never sees A's new row: the successor survived the revocation.
      const user = await aStoredUser(store);
      let survivors = 0;
      for (let trial = 0; trial < TRIALS; trial++) {
        const sessionIndex = aSessionIndex();
        const old = aToken({ userId: user.id, sessionIndex, kind: 'refresh_token', expiresAt: undefined });
        await store.tokens.insert(old);
        const successor: Token = { ...aToken({ userId: user.id, sessionIndex, kind: 'refresh_token', expiresAt: undefined }), familyId: old.familyId };
        await Promise.all([
          store.transaction(async (tx) => {
            if (!(await tx.tokens.markRotated(old.tokenHash, T0 + 1))) return;
            await tx.tokens.insert(successor);
          }),
          other.transaction((tx) => tx.tokens.revokeBySession({ userId: user.id, sessionIndex }, T0 + 2)),
        ]);
        const stored = await store.tokens.find(successor.tokenHash);
        if (stored !== undefined && stored.revokedAt === undefined) survivors++;
      }
      assert.equal(survivors, 0, `a token inserted by a unit that overlapped the revocation of its session stayed live in ${survivors} of ${TRIALS} trials`);
    });

    test('many overlapping units on one row all commit, each after the other (retried when they cannot be serialised)', async () => {
      // Each unit reads the counter row and writes it back plus one: a lost update shows as a
      // total below the number of units.
      const user = await aStoredUser(store, { givenName: '0' });
      const units = 30;
      await Promise.all(
        Array.from({ length: units }, (_, i) =>
          (i % 2 === 0 ? store : other).transaction(async (tx) => {
            const current = (await tx.users.get(user.id))!;
            await tx.users.update({ ...current, givenName: String(Number(current.givenName) + 1) });
          }),
        ),
      );
      assert.equal((await store.users.get(user.id))?.givenName, String(units));
    });

    test('the outer store is usable while no unit runs, and units see a unit committed before them', async () => {
      const token = aToken({ tokenHash: aHash() });
      await store.transaction((tx) => tx.tokens.insert(token));
      assert.equal(await other.transaction(async (tx) => (await tx.tokens.find(token.tokenHash))?.tokenHash), token.tokenHash);
    });
  });
}
