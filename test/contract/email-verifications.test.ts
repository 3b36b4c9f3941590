/**
 * E-mail verification links (EmailVerificationStore, migration 029) and the conditional address
 * write they use (UserStore.confirmEmail) on every database: a link is found until it expires and
 * taken at most once, by one conditional DELETE, whatever the race and on every instance
 * (docs/decisions.md AM53); the address is set and marked verified only while it is still the one
 * expected (AM52); a verified flag is kept through a read and never stands without an address;
 * expired links are cleaned up, a user's links listed newest first and deleted together, and a
 * deleted user's go with the user.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EmailVerification, EmailVerificationStore, Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aHash, aStoredUser, aUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 40;
const MINUTE = 60_000;

for (const kind of DATABASES) {
  describe(`e-mail verification store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    let links: EmailVerificationStore;
    /** Another instance's store on the same database. */
    let other: Store;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS / 2 });
      store = harness.store;
      links = store.emailVerifications;
      other = await harness.open({ poolSize: RACERS / 2 });
      await Promise.all([warmUp(store, RACERS / 2), warmUp(other, RACERS / 2)]);
    });
    after(async () => harness.close());

    async function aLink(overrides: Partial<EmailVerification> = {}): Promise<EmailVerification> {
      const user = await aStoredUser(store);
      const row: EmailVerification = { tokenHash: aHash(), userId: user.id, email: 'new@example.com', previousEmail: user.email, createdAt: T0, expiresAt: T0 + 30 * MINUTE, ...overrides };
      await links.insert(row);
      return row;
    }

    test('found until it expires, on every instance; taken once, then gone', async () => {
      const row = await aLink();
      assert.deepEqual(await links.find(row.tokenHash, T0), row);
      assert.deepEqual(await other.emailVerifications.find(row.tokenHash, row.expiresAt - 1), row);
      assert.equal(await links.find(row.tokenHash, row.expiresAt), undefined, 'expired at expiresAt');
      assert.equal(await other.emailVerifications.take(row.tokenHash, row.expiresAt), undefined, 'an expired one cannot be taken');
      assert.deepEqual(await other.emailVerifications.take(row.tokenHash, T0 + 1), row);
      assert.equal(await links.take(row.tokenHash, T0 + 2), undefined, 'taken once');
      assert.equal(await links.take(aHash(), T0), undefined, 'an unknown one');
    });

    test('no previous address round-trips as none', async () => {
      const row = await aLink({ previousEmail: undefined });
      assert.deepEqual(await links.find(row.tokenHash, T0), row);
    });

    test(`${RACERS} takes of one link at once, on two instances: exactly one gets it`, async () => {
      const row = await aLink();
      const taken = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? links : other.emailVerifications).take(row.tokenHash, T0 + 1)));
      assert.equal(taken.filter((t) => t !== undefined).length, 1);
    });

    test("a user's live links newest first; deleted together; expired ones by the cleanup; a deleted user's with the user", async () => {
      const a = await aLink();
      const newer = { ...a, tokenHash: aHash(), email: 'newer@example.com', createdAt: T0 + 5 };
      await links.insert(newer);
      await links.insert({ ...a, tokenHash: aHash(), createdAt: T0 + 9, expiresAt: T0 + 10 });
      assert.deepEqual(await links.listOfUser(a.userId, T0 + 10), [newer, a]);
      assert.equal(await links.deleteOfUser(a.userId), 3);
      assert.deepEqual(await links.listOfUser(a.userId, T0), []);
      const b = await aLink({ expiresAt: T0 + 1 });
      assert.equal((await links.deleteExpired(T0 + 1, 100)) >= 1, true);
      assert.equal(await links.take(b.tokenHash, T0), undefined);
      const c = await aLink();
      await store.users.delete(c.userId);
      assert.equal(await links.find(c.tokenHash, T0), undefined, 'gone with the user');
    });

    test('confirmEmail writes only while the address is the one expected; none expected matches none', async () => {
      const user = await aStoredUser(store, { email: 'old@example.com' });
      assert.equal(await store.users.confirmEmail(user.id, 'other@example.com', 'new@example.com', T0 + 1), false);
      assert.equal((await store.users.getProfile(user.id))?.emailVerified, false);
      assert.equal(await store.users.confirmEmail(user.id, 'old@example.com', 'new@example.com', T0 + 1), true);
      const profile = await store.users.getProfile(user.id);
      assert.deepEqual([profile?.email, profile?.emailVerified, profile?.updatedAt], ['new@example.com', true, T0 + 1]);
      assert.equal(await store.users.confirmEmail(user.id, 'old@example.com', 'third@example.com', T0), false, 'the old address no longer matches');
      const racing = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? store : other).users.confirmEmail(user.id, 'new@example.com', `racer-${i}@example.com`, T0)));
      assert.equal(racing.filter(Boolean).length, 1, 'one conditional write wins');
      const none = await aStoredUser(store, { email: undefined });
      assert.equal(await store.users.confirmEmail(none.id, undefined, 'first@example.com', T0), true);
      assert.equal((await store.users.get(none.id))?.emailVerified, true);
    });

    test('emailVerified round-trips on insert, update, list and page; never true without an address', async () => {
      const verified = aUser({ email: 'v@example.com', emailVerified: true });
      await store.users.insert(verified, undefined);
      assert.equal((await store.users.get(verified.id))?.emailVerified, true);
      assert.equal((await store.users.list({ filters: { id: verified.id }, exactMatch: true }))[0]?.emailVerified, true);
      assert.equal((await store.users.page({ q: verified.username, limit: 2 }))[0]?.emailVerified, true);
      await store.users.update({ ...verified, emailVerified: false });
      assert.equal((await store.users.getProfile(verified.id))?.emailVerified, false);
      const bare = aUser({ email: undefined, emailVerified: true });
      await store.users.insert(bare, undefined);
      assert.equal((await store.users.get(bare.id))?.emailVerified, false, 'no address: nothing verified');
    });
  });
}
