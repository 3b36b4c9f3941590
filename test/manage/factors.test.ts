/**
 * Second factors as administration use cases (src/manage/user-factors.ts, through
 * `users`): list, remove one, reset all, import a TOTP secret; each change emits its event naming
 * who acts and never a secret; an administrator's factors are out of a non-administrator's reach.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { IdentityError } from '../../src/identity/errors.ts';
import type { Acting } from '../../src/manage/acting.ts';
import { userAdministration } from '../../src/manage/users.ts';
import type { AuditEvent } from '../../src/observability/audit.ts';
import { loadConfig } from '../../src/config.ts';
import { openTotpSecret } from '../../src/crypto/key-encryption.ts';
import { regenerateRecoveryCodes } from '../../src/oauth/factors/enrolment.ts';
import { DEFAULT_TOTP, totpCode } from '../../src/oauth/factors/totp.ts';
import { verifySecondFactor } from '../../src/oauth/factors/verify.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aGroup, aStoredUser, openTestStore, T0, type TestStore } from '../helpers/store.ts';

const groups = { admin: 'Administrators', readonly: 'Administrators (read-only)' };
const operator: Acting = { actor: { via: 'cli', caller: 'root' }, authority: { groups, administrator: true } };
const apiAccount: Acting = { actor: { via: 'identity-api', method: 'basic' }, authority: { groups, administrator: false } };
const SECRET = 'JBSWY3DPEHPK3PXP';
const KEK = 'k'.repeat(32);

for (const kind of DATABASES) {
  describe(`users' second factors as use cases on ${kind.name}`, () => {
    let harness: TestStore;
    const events: AuditEvent[] = [];
    const clock = new ManualClock(T0);
    const ports = () => ({
      store: harness.store,
      clock,
      random: cryptoRandom,
      audit: { emit: (event: AuditEvent) => void events.push(event) },
      settings: { manageAdminGroup: groups.admin, keyEncryptionKey: KEK },
    });
    const users = () => userAdministration(ports());
    before(async () => {
      harness = await openTestStore(kind);
      await harness.store.groups.insert(aGroup({ name: groups.admin, administrator: true }));
    });
    after(async () => harness.close());
    beforeEach(() => {
      events.length = 0;
    });

    test('import stores a sealed TOTP factor and emits factor.enrolled without the secret; factors lists it with recovery codes left; removeFactor and resetFactors emit theirs', async () => {
      const user = await aStoredUser(harness.store);
      const imported = await users().importTotp(operator, user.username, { secret: SECRET, name: 'from the old server' });
      const [stored] = await harness.store.factors.totpFactors(user.id);
      assert.equal(stored?.secret.form, 'sealed');
      clock.advance(1000);
      const codes = await regenerateRecoveryCodes(ports(), user.id, operator.actor);
      const listed = await users().factors(user.id);
      assert.deepEqual(listed.map((f) => [f.kind, f.name, f.codesLeft]), [['totp', 'from the old server', undefined], ['recovery_codes', 'Recovery codes', 10]]);

      assert.deepEqual(await users().removeFactor(operator, user.id, imported.id), imported);
      await assert.rejects(users().removeFactor(operator, user.id, imported.id), (e: unknown) => e instanceof IdentityError && e.code === 'not_found');
      assert.equal(await users().resetFactors(operator, user.username), 1);
      assert.deepEqual(await users().factors(user.id), []);
      assert.deepEqual(events, [
        { event: 'factor.enrolled', userId: user.id, kind: 'totp', factorId: imported.id, name: 'from the old server', actor: operator.actor },
        { event: 'factor.enrolled', userId: user.id, kind: 'recovery_codes', factorId: codes.factor.id, name: 'Recovery codes', actor: operator.actor },
        { event: 'factor.removed', userId: user.id, kind: 'totp', factorId: imported.id, actor: operator.actor },
        { event: 'factor.reset', userId: user.id, removed: 1, actor: operator.actor },
      ]);
      assert.ok(!JSON.stringify(events).includes(SECRET));
    });

    test('bad import input is invalid_argument naming the field; an unknown user is not_found', async () => {
      const user = await aStoredUser(harness.store);
      const code = (field: string) => (e: unknown) => e instanceof IdentityError && e.code === 'invalid_argument' && e.field === field;
      await assert.rejects(users().importTotp(operator, user.id, { secret: 'not a secret' }), code('secret'));
      await assert.rejects(users().importTotp(operator, user.id, { secret: SECRET, digits: 9 }), code('digits'));
      await assert.rejects(users().importTotp(operator, user.id, { secret: SECRET, name: ' ' }), code('name'));
      await assert.rejects(users().importTotp(operator, 'nobody-at-all', { secret: SECRET }), (e: unknown) => e instanceof IdentityError && e.code === 'not_found');
      assert.deepEqual(await users().factors(user.id), []);
      assert.deepEqual(events, []);
    });

    test("an administrator's factors are changed by administrators only", async () => {
      const admin = await aStoredUser(harness.store);
      const group = await harness.store.groups.getByName(groups.admin);
      await harness.store.groups.addMember(group!.id, admin.id);
      const only = (e: unknown) => e instanceof IdentityError && e.code === 'administrators_only';
      await assert.rejects(users().importTotp(apiAccount, admin.id, { secret: SECRET }), only);
      const factor = await users().importTotp(operator, admin.id, { secret: SECRET });
      await assert.rejects(users().removeFactor(apiAccount, admin.id, factor.id), only);
      await assert.rejects(users().resetFactors(apiAccount, admin.id), only);
      await assert.rejects(users().renameFactor(apiAccount, admin.id, factor.id, 'mine now'), only);
      assert.deepEqual((await users().factors(admin.id)).map((f) => f.name), ['Authenticator app']);
    });

    test('renameFactor renames by user and id together, with the one name rule, and emits factor.renamed', async () => {
      const user = await aStoredUser(harness.store);
      const other = await aStoredUser(harness.store);
      const factor = await users().importTotp(operator, user.id, { secret: SECRET });
      const renamed = await users().renameFactor(operator, user.username, factor.id, '  work phone  ');
      assert.deepEqual(renamed, { ...factor, name: 'work phone' });
      assert.deepEqual((await users().factors(user.id)).map((f) => f.name), ['work phone']);
      const name = (e: unknown) => e instanceof IdentityError && e.code === 'invalid_argument' && e.field === 'name';
      for (const bad of ['', '   ', 'x'.repeat(65), 'tab\there', 'bell\u0007', 'c1\u0085', 'del\u007f']) {
        await assert.rejects(users().renameFactor(operator, user.id, factor.id, bad), name, JSON.stringify(bad));
      }
      assert.equal((await users().renameFactor(operator, user.id, factor.id, 'é'.repeat(64))).name, 'é'.repeat(64));
      const missing = (e: unknown) => e instanceof IdentityError && e.code === 'not_found';
      await assert.rejects(users().renameFactor(operator, other.id, factor.id, 'stolen'), missing);
      await assert.rejects(users().renameFactor(operator, user.id, 'no-such-factor', 'x'), missing);
      assert.deepEqual(events.slice(1), [
        { event: 'factor.renamed', userId: user.id, kind: 'totp', factorId: factor.id, name: 'work phone', actor: operator.actor },
        { event: 'factor.renamed', userId: user.id, kind: 'totp', factorId: factor.id, name: 'é'.repeat(64), actor: operator.actor },
      ]);
    });

    test('sealTotpSecrets seals the secrets stored in the clear in one unit of work, once: codes still verify; a second run seals none; without a key it is refused', async () => {
      const unkeyed = userAdministration({ ...ports(), settings: { manageAdminGroup: groups.admin, keyEncryptionKey: undefined } });
      await assert.rejects(unkeyed.sealTotpSecrets(operator), (e: unknown) => e instanceof IdentityError && e.code === 'invalid_argument');
      const user = await aStoredUser(harness.store);
      const clear = await unkeyed.importTotp(operator, user.id, { secret: SECRET });
      clock.advance(1000);
      await unkeyed.importTotp(operator, user.id, { secret: 'JBSWY3DPEHPK3PXPJBSWY3DP', name: 'tablet' });
      assert.deepEqual((await harness.store.factors.totpFactors(user.id)).map((t) => t.secret), [{ form: 'clear', value: SECRET }, { form: 'clear', value: 'JBSWY3DPEHPK3PXPJBSWY3DP' }]);
      const before = (await harness.store.factors.clearTotpSecrets()).length;
      events.length = 0;
      assert.equal(await users().sealTotpSecrets(operator), before);
      assert.deepEqual(await harness.store.factors.clearTotpSecrets(), []);
      const stored = await harness.store.factors.totpFactors(user.id);
      assert.deepEqual(stored.map((t) => t.secret.form), ['sealed', 'sealed']);
      assert.deepEqual(stored.map((t) => openTotpSecret(t.secret.value, KEK)), [SECRET, 'JBSWY3DPEHPK3PXPJBSWY3DP']);
      assert.equal(await users().sealTotpSecrets(operator), 0);
      const code = totpCode(DEFAULT_TOTP, SECRET, clock.now());
      const verified = await verifySecondFactor({ config: loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com', GATEHOUSE_KEY_ENCRYPTION_KEY: KEK }), store: harness.store, clock, audit: { emit: () => undefined } }, { userId: user.id, username: user.username, code, ip: '192.0.2.1' });
      assert.deepEqual(verified, { type: 'ok', kind: 'totp', amr: ['otp', 'mfa'] });
      assert.deepEqual(events.filter((e) => e.event === 'factor.secrets_sealed'), [
        { event: 'factor.secrets_sealed', sealed: before, actor: operator.actor },
        { event: 'factor.secrets_sealed', sealed: 0, actor: operator.actor },
      ]);
      assert.ok(!JSON.stringify(events).includes(SECRET));
      assert.equal(clear.kind, 'totp');
    });

    test('sealing is conditional on the clear secret: racing runs on two stores seal each secret exactly once', async () => {
      const unkeyed = userAdministration({ ...ports(), settings: { manageAdminGroup: groups.admin, keyEncryptionKey: undefined } });
      const user = await aStoredUser(harness.store);
      for (let i = 0; i < 5; i++) await unkeyed.importTotp(operator, user.id, { secret: SECRET, name: `app ${i}` });
      const other = await harness.open();
      try {
        const pending = (await harness.store.factors.clearTotpSecrets()).length;
        const counts = await Promise.all([users().sealTotpSecrets(operator), userAdministration({ ...ports(), store: other }).sealTotpSecrets(operator)]);
        assert.equal(counts[0] + counts[1], pending);
        assert.deepEqual((await harness.store.factors.totpFactors(user.id)).map((t) => openTotpSecret(t.secret.value, KEK)), Array(5).fill(SECRET));
      } finally {
        await other.close();
      }
    });
  });
}
