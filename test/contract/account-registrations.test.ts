/**
 * Self-registration links (AccountRegistrationStore, migration 031) and the conditional user
 * writes of approval (UserStore.changeStatus, deleteWithStatus) on every database: a link is found
 * until it expires and taken at most once, by one conditional DELETE, whatever the race and on
 * every instance; expired links are cleaned up; a pending user is approved or rejected by exactly
 * one of any number of racing decisions (docs/registration.md, decisions AM62 and AM66).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { cleanUp } from '../../src/oauth/cleanup.ts';
import type { AccountRegistration, AccountRegistrationStore, Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aHash, aStoredUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 40;
const MINUTE = 60_000;

for (const kind of DATABASES) {
  describe(`account registration store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    let registrations: AccountRegistrationStore;
    /** Another instance's store on the same database. */
    let other: Store;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS / 2 });
      store = harness.store;
      registrations = store.accountRegistrations;
      other = await harness.open({ poolSize: RACERS / 2 });
      await Promise.all([warmUp(store, RACERS / 2), warmUp(other, RACERS / 2)]);
    });
    after(async () => harness.close());

    async function aRegistration(overrides: Partial<AccountRegistration> = {}): Promise<AccountRegistration> {
      const row: AccountRegistration = { tokenHash: aHash(), email: `${aHash().slice(0, 8)}@example.com`, givenName: 'Given', familyName: undefined, locale: 'fi', returnTo: '/uas/oauth2/authorization?client_id=x', createdAt: T0, expiresAt: T0 + 30 * MINUTE, ...overrides };
      await registrations.insert(row);
      return row;
    }

    test('found until it expires, on every instance, with what the form asked for; taken once, then gone', async () => {
      const row = await aRegistration();
      assert.deepEqual(await registrations.find(row.tokenHash, T0), row);
      assert.deepEqual(await other.accountRegistrations.find(row.tokenHash, row.expiresAt - 1), row);
      assert.equal(await registrations.find(row.tokenHash, row.expiresAt), undefined, 'expired at expiresAt');
      assert.equal(await other.accountRegistrations.take(row.tokenHash, row.expiresAt), undefined, 'an expired one cannot be taken');
      assert.deepEqual(await other.accountRegistrations.take(row.tokenHash, T0 + 1), row);
      assert.equal(await registrations.take(row.tokenHash, T0 + 2), undefined, 'taken once');
      assert.equal(await registrations.take(aHash(), T0), undefined, 'an unknown one');
      const bare = await aRegistration({ givenName: undefined, returnTo: undefined });
      assert.deepEqual(await registrations.find(bare.tokenHash, T0), bare);
    });

    test(`${RACERS} takes of one link at once, on two instances: exactly one gets it`, async () => {
      const row = await aRegistration();
      const taken = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? registrations : other.accountRegistrations).take(row.tokenHash, T0 + 1)));
      assert.equal(taken.filter((t) => t !== undefined).length, 1);
    });

    test('the cleanup job deletes expired links only', async () => {
      const live = await aRegistration({ expiresAt: T0 + 10 * 365 * 24 * 60 * MINUTE });
      const expired = await aRegistration({ expiresAt: T0 + 1 });
      const report = await cleanUp({ store, clock: new ManualClock(T0 + 2) });
      assert.equal(report.accountRegistrations >= 1, true, JSON.stringify(report));
      assert.equal(await registrations.take(expired.tokenHash, T0), undefined);
      assert.deepEqual(await registrations.find(live.tokenHash, T0), live);
    });

    test('changeStatus writes only from the status expected; of racing approvals one wins', async () => {
      const user = await aStoredUser(store, { status: 'pending' });
      assert.equal(await store.users.changeStatus(user.id, 'enabled', 'disabled', T0), false, 'not enabled');
      const racing = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? store : other).users.changeStatus(user.id, 'pending', 'enabled', T0 + 1)));
      assert.equal(racing.filter(Boolean).length, 1, 'one conditional write wins');
      const after = await store.users.getProfile(user.id);
      assert.deepEqual([after?.status, after?.updatedAt], ['enabled', T0 + 1]);
      assert.equal(await store.users.changeStatus(aHash(), 'pending', 'enabled', T0), false, 'an unknown user');
    });

    test('deleteWithStatus deletes only in the status expected; an approval and a rejection racing: one of them', async () => {
      const enabled = await aStoredUser(store);
      assert.equal(await store.users.deleteWithStatus(enabled.id, 'pending'), false);
      assert.notEqual(await store.users.getProfile(enabled.id), undefined);
      for (let round = 0; round < 5; round++) {
        const user = await aStoredUser(store, { status: 'pending' });
        const [approved, rejected] = await Promise.all([store.users.changeStatus(user.id, 'pending', 'enabled', T0), other.users.deleteWithStatus(user.id, 'pending')]);
        assert.equal(Number(approved) + Number(rejected), 1, 'exactly one decision');
        assert.equal((await store.users.getProfile(user.id))?.status, approved ? 'enabled' : undefined);
      }
    });
  });
}
