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
import { regenerateRecoveryCodes } from '../../src/oauth/factors/enrolment.ts';
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
      assert.equal((await users().factors(admin.id)).length, 1);
    });
  });
}
