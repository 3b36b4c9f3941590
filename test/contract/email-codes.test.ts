/**
 * E-mail one-time codes in the store (EmailCodeStore, migration 030) and e-mail factors
 * (FactorStore.insertEmailFactor) on every database: a code is taken once, by one conditional
 * DELETE, whatever the race and on every instance; only by its user, purpose and hash, and only
 * until it expires; a user's codes of a purpose are deleted together, the expired ones by the
 * cleanup; a deleted factor's or user's codes go with it. One e-mail factor per user, however
 * many are stored at once (docs/decisions.md AM91).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { EmailCode, Factor } from '../../src/domain/factor.ts';
import { ConflictError, MissingReferenceError, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aHash, aStoredUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 40;
const MINUTE = 60_000;

function anEmailFactor(userId: string, overrides: Partial<Factor> = {}): Factor {
  return { id: randomUUID(), userId, kind: 'email_otp', name: 'E-mail codes', createdAt: T0, lastUsedAt: undefined, email: `${userId.slice(0, 8)}@example.com`, ...overrides };
}

for (const kind of DATABASES) {
  describe(`e-mail code store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    /** Another instance's store on the same database. */
    let other: Store;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS / 2 });
      store = harness.store;
      other = await harness.open({ poolSize: RACERS / 2 });
      await Promise.all([warmUp(store, RACERS / 2), warmUp(other, RACERS / 2)]);
    });
    after(async () => harness.close());

    async function aCode(overrides: Partial<EmailCode> = {}): Promise<EmailCode> {
      const userId = overrides.userId ?? (await aStoredUser(store)).id;
      const row: EmailCode = { id: randomUUID(), userId, factorId: undefined, purpose: 'enrol', address: 'someone@example.com', codeHash: aHash(), createdAt: T0, expiresAt: T0 + 10 * MINUTE, ...overrides };
      await store.emailCodes.insert(row);
      return row;
    }

    test('taken once, until it expires, on every instance; only by its own user, purpose and hash', async () => {
      const row = await aCode();
      const stranger = await aStoredUser(store);
      assert.equal(await store.emailCodes.take(stranger.id, 'enrol', row.codeHash, T0), undefined, "another user's");
      assert.equal(await store.emailCodes.take(row.userId, 'sign_in', row.codeHash, T0), undefined, 'another purpose');
      assert.equal(await store.emailCodes.take(row.userId, 'verify_email', row.codeHash, T0), undefined, 'another purpose');
      assert.equal(await store.emailCodes.take(row.userId, 'enrol', aHash(), T0), undefined, 'another hash');
      assert.equal(await other.emailCodes.take(row.userId, 'enrol', row.codeHash, row.expiresAt), undefined, 'expired at expiresAt');
      assert.deepEqual(await other.emailCodes.take(row.userId, 'enrol', row.codeHash, row.expiresAt - 1), row);
      assert.equal(await store.emailCodes.take(row.userId, 'enrol', row.codeHash, T0), undefined, 'taken once');
    });

    test('a sign-in code carries its factor; deleting the factor deletes its codes', async () => {
      const user = await aStoredUser(store);
      const factor = anEmailFactor(user.id);
      await store.factors.insertEmailFactor(factor);
      assert.deepEqual(await store.factors.list(user.id), [factor]);
      const row = await aCode({ userId: user.id, factorId: factor.id, purpose: 'sign_in', address: factor.email! });
      assert.deepEqual(await store.emailCodes.take(user.id, 'sign_in', row.codeHash, T0), row);
      const again = await aCode({ userId: user.id, factorId: factor.id, purpose: 'sign_in' });
      assert.equal(await store.factors.delete(user.id, factor.id), true);
      assert.equal(await store.emailCodes.take(user.id, 'sign_in', again.codeHash, T0), undefined, "a removed factor's code is gone");
      await assert.rejects(store.emailCodes.insert({ ...again, id: randomUUID() }), MissingReferenceError, 'a code of a factor that does not exist');
    });

    test(`${RACERS} takes of one code at once, on two instances: exactly one gets it`, async () => {
      const row = await aCode({ purpose: 'sign_in' });
      const taken = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? store : other).emailCodes.take(row.userId, 'sign_in', row.codeHash, T0 + 1)));
      assert.equal(taken.filter((t) => t !== undefined).length, 1);
    });

    test("a user's codes of a purpose are deleted together; expired ones by the cleanup; a deleted user's with the user", async () => {
      const a = await aCode();
      const a2 = await aCode({ userId: a.userId });
      const aSignIn = await aCode({ userId: a.userId, purpose: 'verify_email' });
      assert.equal(await store.emailCodes.deleteOfUser(a.userId, 'enrol'), 2);
      assert.equal(await store.emailCodes.take(a.userId, 'enrol', a2.codeHash, T0), undefined);
      assert.deepEqual(await store.emailCodes.take(a.userId, 'verify_email', aSignIn.codeHash, T0), aSignIn, 'another purpose is kept');

      const expired = await aCode({ expiresAt: T0 + 1 });
      const live = await aCode({ expiresAt: T0 + 10 * MINUTE });
      let deleted = 0;
      for (let n = -1; n !== 0; deleted += n) n = await store.emailCodes.deleteExpired(T0 + 2, 1);
      assert.ok(deleted >= 1);
      assert.equal(await store.emailCodes.take(expired.userId, 'enrol', expired.codeHash, T0), undefined, 'the expired one was deleted');
      assert.deepEqual(await store.emailCodes.take(live.userId, 'enrol', live.codeHash, T0), live, 'the live one was kept');

      const gone = await aCode();
      assert.equal(await store.users.delete(gone.userId), true);
      assert.equal(await store.emailCodes.take(gone.userId, 'enrol', gone.codeHash, T0), undefined);
    });

    test('one e-mail factor per user: a second is a ConflictError; of many stored at once, one is kept', async () => {
      const user = await aStoredUser(store);
      await store.factors.insertEmailFactor(anEmailFactor(user.id));
      await assert.rejects(store.factors.insertEmailFactor(anEmailFactor(user.id, { email: 'another@example.com' })), ConflictError);
      await assert.rejects(store.factors.insertEmailFactor(anEmailFactor(randomUUID())), MissingReferenceError);

      const racer = await aStoredUser(store);
      const results = await Promise.allSettled(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? store : other).factors.insertEmailFactor(anEmailFactor(racer.id))));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof ConflictError, String(r.reason));
      assert.equal((await store.factors.list(racer.id)).length, 1);
    });

    test('touch records the last use', async () => {
      const user = await aStoredUser(store);
      const factor = anEmailFactor(user.id);
      await store.factors.insertEmailFactor(factor);
      await other.factors.touch(factor.id, T0 + 5);
      assert.deepEqual(await store.factors.list(user.id), [{ ...factor, lastUsedAt: T0 + 5 }]);
    });
  });
}
