/**
 * Passkeys in the store (migration 024) on every database: a passkey is a factor of its user,
 * listed and removed with the others; its credential ID is unique across users; its signature
 * counter advances by one conditional write (docs/decisions.md SA60) whatever the race; each
 * user has one random user handle (SA61); a ceremony's challenge is taken once, by purpose and
 * binding, on every instance (SA64).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { PasskeyFactor } from '../../src/domain/factor.ts';
import { ConflictError, MissingReferenceError, type PasskeyChallenge, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aHash, aStoredUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;

function aPasskey(userId: string, overrides: Partial<PasskeyFactor> = {}, backupEligible = false): PasskeyFactor {
  return {
    factor: { id: randomUUID(), userId, kind: 'passkey', name: 'laptop', createdAt: T0, lastUsedAt: undefined, backupEligible },
    credentialId: randomUUID().replace(/-/g, ''),
    publicKey: 'pQECAyYgASFYIA',
    signCount: 0,
    transports: ['internal', 'hybrid'],
    backedUp: false,
    aaguid: '00000000-0000-0000-0000-000000000000',
    ...overrides,
  };
}

for (const kind of DATABASES) {
  describe(`passkey store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    let other: Store;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS });
      store = harness.store;
      other = await harness.open({ poolSize: RACERS });
      await Promise.all([warmUp(store, RACERS), warmUp(other, RACERS)]);
    });
    after(async () => harness.close());

    test('a passkey is stored, found by its credential ID, and listed among the factors with its backup eligibility', async () => {
      const user = await aStoredUser(store);
      const device = aPasskey(user.id);
      const synced = aPasskey(user.id, { backedUp: true, signCount: 7, transports: [] }, true);
      synced.factor.createdAt = T0 + 1;
      await store.factors.insertPasskey(synced);
      await store.factors.insertPasskey(device);
      assert.deepEqual(await store.factors.passkeys(user.id), [device, synced]);
      assert.deepEqual(await store.factors.list(user.id), [device.factor, synced.factor]);
      assert.deepEqual(await store.factors.passkeyByCredentialId(synced.credentialId), synced);
      assert.equal(await store.factors.passkeyByCredentialId('unknown'), undefined);
      assert.deepEqual(await store.factors.totpFactors(user.id), []);
    });

    test('a credential ID registered to one user is refused for any other; a passkey of an unknown user is refused', async () => {
      const first = await aStoredUser(store);
      const second = await aStoredUser(store);
      const passkey = aPasskey(first.id);
      await store.factors.insertPasskey(passkey);
      await assert.rejects(store.factors.insertPasskey(aPasskey(second.id, { credentialId: passkey.credentialId })), ConflictError);
      await assert.rejects(store.factors.insertPasskey(aPasskey(randomUUID())), MissingReferenceError);
    });

    test('the counter must advance; a counter that stays 0 is accepted while it always was 0; last used and the BS flag are recorded', async () => {
      const user = await aStoredUser(store);
      const counting = aPasskey(user.id, { signCount: 5 });
      const zero = aPasskey(user.id);
      zero.factor.createdAt = T0 + 1;
      await store.factors.insertPasskey(counting);
      await store.factors.insertPasskey(zero);
      assert.equal(await store.factors.usePasskey(counting.factor.id, 5, false, T0 + 1), false);
      assert.equal(await store.factors.usePasskey(counting.factor.id, 4, false, T0 + 1), false);
      assert.equal(await store.factors.usePasskey(counting.factor.id, 0, false, T0 + 1), false);
      assert.equal(await store.factors.usePasskey(counting.factor.id, 6, true, T0 + 2), true);
      assert.equal(await store.factors.usePasskey(zero.factor.id, 0, false, T0 + 3), true);
      assert.equal(await store.factors.usePasskey(zero.factor.id, 0, false, T0 + 4), true);
      assert.equal(await store.factors.usePasskey(zero.factor.id, 2, false, T0 + 5), true);
      assert.equal(await store.factors.usePasskey(zero.factor.id, 0, false, T0 + 6), false);
      assert.equal(await store.factors.usePasskey(randomUUID(), 9, false, T0), false);
      const after = await store.factors.passkeys(user.id);
      assert.deepEqual(
        after.map((p) => [p.signCount, p.backedUp, p.factor.lastUsedAt]),
        [
          [6, true, T0 + 2],
          [2, false, T0 + 5],
        ],
      );
    });

    test(`${RACERS} racing uses with one counter value, from two instances: exactly one is recorded`, async () => {
      const user = await aStoredUser(store);
      const passkey = aPasskey(user.id, { signCount: 10 });
      await store.factors.insertPasskey(passkey);
      const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? store : other).factors.usePasskey(passkey.factor.id, 11, false, T0 + i)));
      assert.equal(results.filter(Boolean).length, 1);
    });

    test('a user has one handle, made once even when asked for at once on two instances; it finds the user; it goes with the user', async () => {
      const user = await aStoredUser(store);
      const handles = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? store : other).factors.userHandle(user.id, `handle-${user.id}-${i}`)));
      assert.equal(new Set(handles).size, 1);
      assert.equal(await store.factors.userHandle(user.id, 'another'), handles[0]);
      assert.equal(await store.factors.userOfHandle(handles[0]!), user.id);
      assert.equal(await store.factors.userOfHandle('nobody'), undefined);
      await assert.rejects(store.factors.userHandle(randomUUID(), 'x'), MissingReferenceError);
      assert.equal(await store.users.delete(user.id), true);
      assert.equal(await store.factors.userOfHandle(handles[0]!), undefined);
    });

    test('removing a passkey or the user removes it everywhere', async () => {
      const user = await aStoredUser(store);
      const passkey = aPasskey(user.id);
      await store.factors.insertPasskey(passkey);
      assert.equal(await store.factors.delete(user.id, passkey.factor.id), true);
      assert.equal(await store.factors.passkeyByCredentialId(passkey.credentialId), undefined);
      const again = aPasskey(user.id);
      await store.factors.insertPasskey(again);
      assert.equal(await store.users.delete(user.id), true);
      assert.equal(await store.factors.passkeyByCredentialId(again.credentialId), undefined);
    });

    describe('challenges', () => {
      const aChallenge = (overrides: Partial<PasskeyChallenge> = {}): PasskeyChallenge => ({ challengeHash: aHash(), purpose: 'sign_in', binding: aHash(), userId: undefined, createdAt: T0, expiresAt: T0 + 300_000, ...overrides });

      test('a challenge is taken once, only for its purpose and binding, only before it expires', async () => {
        const user = await aStoredUser(store);
        const c = aChallenge({ purpose: 'register', userId: user.id });
        await store.passkeyChallenges.insert(c);
        assert.equal(await store.passkeyChallenges.take(c.challengeHash, 'sign_in', c.binding, T0), undefined);
        assert.equal(await store.passkeyChallenges.take(c.challengeHash, 'register', aHash(), T0), undefined);
        assert.equal(await store.passkeyChallenges.take(c.challengeHash, 'register', c.binding, c.expiresAt), undefined);
        assert.deepEqual(await store.passkeyChallenges.take(c.challengeHash, 'register', c.binding, T0 + 1), c);
        assert.equal(await store.passkeyChallenges.take(c.challengeHash, 'register', c.binding, T0 + 1), undefined);
      });

      test(`${RACERS} racing takes of one challenge, from two instances: exactly one gets it`, async () => {
        const c = aChallenge();
        await store.passkeyChallenges.insert(c);
        const taken = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? store : other).passkeyChallenges.take(c.challengeHash, c.purpose, c.binding, T0)));
        assert.equal(taken.filter((t) => t !== undefined).length, 1);
      });

      test('expired challenges are deleted, live ones kept', async () => {
        const live = aChallenge({ expiresAt: T0 + 10 });
        const dead = aChallenge({ expiresAt: T0 + 5 });
        await store.passkeyChallenges.insert(live);
        await store.passkeyChallenges.insert(dead);
        assert.ok((await store.passkeyChallenges.deleteExpired(T0 + 5, 1000)) >= 1);
        assert.equal(await store.passkeyChallenges.take(dead.challengeHash, dead.purpose, dead.binding, T0), undefined);
        assert.deepEqual(await store.passkeyChallenges.take(live.challengeHash, live.purpose, live.binding, T0), live);
      });
    });
  });
}
