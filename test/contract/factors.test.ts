import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Factor, TotpFactor } from '../../src/domain/factor.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { MissingReferenceError } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aStoredUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;

function aFactor(userId: string, overrides: Partial<Factor> = {}): Factor {
  return { id: randomUUID(), userId, kind: 'totp', name: 'phone', createdAt: T0, lastUsedAt: undefined, ...overrides };
}

function aTotp(userId: string, overrides: Partial<Factor> = {}): TotpFactor {
  return { factor: aFactor(userId, overrides), secret: { form: 'clear', value: 'JBSWY3DPEHPK3PXP' }, algorithm: 'SHA1', digits: 6, period: 30, lastStep: undefined };
}

for (const kind of DATABASES) {
  describe(`factor store on ${kind.name}`, () => {
    let harness: TestStore;
    let other: TestStore['store'];
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS });
      other = await harness.open({ poolSize: RACERS });
    });
    after(async () => harness.close());

    test('a TOTP factor is stored with its secret and parameters, listed without them, oldest first', async () => {
      const user = await aStoredUser(harness.store);
      const first = aTotp(user.id, { createdAt: T0 });
      const second: TotpFactor = { ...aTotp(user.id, { createdAt: T0 + 1, name: 'tablet' }), secret: { form: 'sealed', value: 'v1.a.b.c' }, algorithm: 'SHA256', digits: 8, period: 60 };
      await harness.store.factors.insertTotp(second);
      await harness.store.factors.insertTotp(first);
      await harness.store.factors.insertTotp(aTotp((await aStoredUser(harness.store)).id));
      assert.deepEqual(await harness.store.factors.list(user.id), [first.factor, second.factor]);
      assert.deepEqual(await harness.store.factors.totpFactors(user.id), [first, second]);
    });

    test('a factor of an unknown user is refused', async () => {
      await assert.rejects(harness.store.factors.insertTotp(aTotp(randomUUID())), MissingReferenceError);
      await assert.rejects(harness.store.factors.replaceRecoveryCodes(aFactor(randomUUID(), { kind: 'recovery_codes' }), ['h']), MissingReferenceError);
    });

    test('a TOTP step is accepted once; an earlier one never after a later one; last used is recorded', async () => {
      const user = await aStoredUser(harness.store);
      const totp = aTotp(user.id);
      await harness.store.factors.insertTotp(totp);
      assert.equal(await harness.store.factors.useTotpStep(totp.factor.id, 100, T0 + 5), true);
      assert.equal(await harness.store.factors.useTotpStep(totp.factor.id, 100, T0 + 6), false);
      assert.equal(await harness.store.factors.useTotpStep(totp.factor.id, 99, T0 + 7), false);
      assert.equal(await harness.store.factors.useTotpStep(totp.factor.id, 101, T0 + 8), true);
      const [stored] = await harness.store.factors.totpFactors(user.id);
      assert.equal(stored?.lastStep, 101);
      assert.equal(stored?.factor.lastUsedAt, T0 + 8);
      assert.equal(await harness.store.factors.useTotpStep(randomUUID(), 200, T0), false);
    });

    test(`${RACERS} racing uses of one TOTP step, from two instances: exactly one is accepted`, async () => {
      const user = await aStoredUser(harness.store);
      const totp = aTotp(user.id);
      await harness.store.factors.insertTotp(totp);
      await Promise.all([warmUp(harness.store, RACERS), warmUp(other, RACERS)]);
      const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? harness.store : other).factors.useTotpStep(totp.factor.id, 500, T0 + i)));
      assert.equal(results.filter(Boolean).length, 1);
    });

    test('a recovery code is used once, only by its user; the count left falls', async () => {
      const user = await aStoredUser(harness.store);
      const stranger = await aStoredUser(harness.store);
      const set = aFactor(user.id, { kind: 'recovery_codes', name: 'Recovery codes' });
      await harness.store.factors.replaceRecoveryCodes(set, [hashSecret('a'), hashSecret('b')]);
      assert.equal(await harness.store.factors.recoveryCodesLeft(set.id), 2);
      assert.equal(await harness.store.factors.useRecoveryCode(stranger.id, hashSecret('a'), T0), undefined);
      assert.equal(await harness.store.factors.useRecoveryCode(user.id, hashSecret('a'), T0 + 3), set.id);
      assert.equal(await harness.store.factors.useRecoveryCode(user.id, hashSecret('a'), T0 + 4), undefined);
      assert.equal(await harness.store.factors.useRecoveryCode(user.id, hashSecret('c'), T0 + 4), undefined);
      assert.equal(await harness.store.factors.recoveryCodesLeft(set.id), 1);
      assert.equal((await harness.store.factors.list(user.id))[0]?.lastUsedAt, T0 + 3);
    });

    test(`${RACERS} racing uses of one recovery code, from two instances: exactly one gets it`, async () => {
      const user = await aStoredUser(harness.store);
      const set = aFactor(user.id, { kind: 'recovery_codes', name: 'Recovery codes' });
      await harness.store.factors.replaceRecoveryCodes(set, [hashSecret('only')]);
      await Promise.all([warmUp(harness.store, RACERS), warmUp(other, RACERS)]);
      const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? harness.store : other).factors.useRecoveryCode(user.id, hashSecret('only'), T0 + i)));
      assert.deepEqual(results.filter((r) => r !== undefined), [set.id]);
    });

    test('replacing the recovery codes drops the old set; racing replacements leave exactly one whole set', async () => {
      const user = await aStoredUser(harness.store);
      const old = aFactor(user.id, { kind: 'recovery_codes', name: 'Recovery codes' });
      await harness.store.factors.replaceRecoveryCodes(old, [hashSecret('old')]);
      const sets = Array.from({ length: 10 }, (_, i) => aFactor(user.id, { kind: 'recovery_codes', name: 'Recovery codes', createdAt: T0 + i }));
      await Promise.all(sets.map((set, i) => (i % 2 === 0 ? harness.store : other).factors.replaceRecoveryCodes(set, [hashSecret(`${i}-a`), hashSecret(`${i}-b`)])));
      const left = await harness.store.factors.list(user.id);
      assert.equal(left.length, 1);
      const winner = sets.findIndex((set) => set.id === left[0]!.id);
      assert.ok(winner >= 0);
      assert.equal(await harness.store.factors.recoveryCodesLeft(left[0]!.id), 2);
      assert.equal(await harness.store.factors.useRecoveryCode(user.id, hashSecret('old'), T0), undefined);
      assert.equal(await harness.store.factors.useRecoveryCode(user.id, hashSecret(`${winner}-b`), T0), left[0]!.id);
    });

    test('delete removes one factor of the user only; deleteAll every one; deleting the user removes everything', async () => {
      const user = await aStoredUser(harness.store);
      const a = aTotp(user.id);
      const b = aTotp(user.id, { createdAt: T0 + 1 });
      await harness.store.factors.insertTotp(a);
      await harness.store.factors.insertTotp(b);
      const set = aFactor(user.id, { kind: 'recovery_codes', name: 'Recovery codes', createdAt: T0 + 2 });
      await harness.store.factors.replaceRecoveryCodes(set, [hashSecret('x')]);
      assert.equal(await harness.store.factors.delete((await aStoredUser(harness.store)).id, a.factor.id), false);
      assert.equal(await harness.store.factors.delete(user.id, a.factor.id), true);
      assert.deepEqual((await harness.store.factors.list(user.id)).map((f) => f.id), [b.factor.id, set.id]);
      assert.equal(await harness.store.factors.deleteAll(user.id), 2);
      assert.deepEqual(await harness.store.factors.list(user.id), []);

      const gone = await aStoredUser(harness.store);
      await harness.store.factors.insertTotp(aTotp(gone.id));
      const goneSet = aFactor(gone.id, { kind: 'recovery_codes', name: 'Recovery codes' });
      await harness.store.factors.replaceRecoveryCodes(goneSet, [hashSecret('y')]);
      assert.equal(await harness.store.users.delete(gone.id), true);
      assert.deepEqual(await harness.store.factors.list(gone.id), []);
      assert.equal(await harness.store.factors.recoveryCodesLeft(goneSet.id), 0);
    });
  });
}
