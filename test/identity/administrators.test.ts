/**
 * The administrators' rules (src/identity/administrators.ts) in every use case that changes users
 * or groups, over the real store on every database: out of reach of a caller who is not an
 * administrator, the last enabled administrator kept whoever asks, and two removals racing each
 * other — through any pair of use cases — never both pass.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { User } from '../../src/domain/user.ts';
import { markAdministratorGroups, type Authority } from '../../src/identity/administrators.ts';
import { IdentityError } from '../../src/identity/errors.ts';
import { addMember, createGroup, deleteGroup, groupsOfUser, removeMember, unmarkAdministratorGroup } from '../../src/identity/groups.ts';
import { updateUser } from '../../src/identity/user-changes.ts';
import { createUser, deleteUser, setPassword, setStatus } from '../../src/identity/users.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import type { Store } from '../../src/storage/ports.ts';
import { openSqlStore } from '../../src/storage/sql/store.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';

const ADMINS = AS_OPERATOR.groups.admin;
const READERS = AS_OPERATOR.groups.readonly;
/** The identity API's account, a member of its group, a machine client: not administrators. */
const DELEGATED: Authority = { ...AS_OPERATOR, administrator: false };

function refusedWith(code: 'administrators_only' | 'last_administrator' | 'in_use', message: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof IdentityError, String(error));
    assert.equal(error.code, code, error.message);
    assert.match(error.message, message);
    return true;
  };
}

const outOfReach = refusedWith('administrators_only', /only a management administrator may change it/);
const lastAdministrator = refusedWith('last_administrator', /without an enabled member; make someone else an administrator first$/);

for (const kind of DATABASES) {
  describe(`administrators' rules on ${kind.name}`, () => {
    let database: TestDatabase;
    let store: Store;
    const clock = new ManualClock();
    const deps = () => ({ ...store, clock, random: cryptoRandom });
    let n = 0;

    async function user(groups: string[] = [], status: User['status'] = 'enabled'): Promise<User> {
      // No password: hashing one is not what these tests are about, and the race rounds are many.
      return createUser(deps(), { username: `user-${++n}`, status, groups }, AS_OPERATOR);
    }

    /** Leaves exactly `keep` in the administrators group. */
    async function onlyAdministrators(...keep: User[]): Promise<void> {
      const group = (await store.groups.getByName(ADMINS))!;
      for (const id of await store.groups.members(group.id)) if (!keep.some((u) => u.id === id)) await store.groups.removeMember(group.id, id);
      for (const u of keep) await store.groups.addMember(group.id, u.id);
    }

    before(async () => {
      database = await kind.create();
      store = await openSqlStore(database.url);
      for (const name of [ADMINS, READERS, 'Staff']) await createGroup(deps(), { name }, AS_OPERATOR);
    });
    after(async () => {
      await store.close();
      await database.drop();
    });

    test('a caller who is not an administrator reaches neither administrator group nor any of their members', async () => {
      const admin = await user([ADMINS]);
      const reader = await user([READERS]);
      const plain = await user();
      for (const group of [ADMINS, READERS, ADMINS.toUpperCase()]) {
        await assert.rejects(addMember(deps(), group, plain.id, DELEGATED), outOfReach);
        await assert.rejects(createUser(deps(), { username: `new-${++n}`, groups: ['Staff', group] }, DELEGATED), outOfReach);
      }
      await assert.rejects(deleteGroup(deps(), READERS, DELEGATED), outOfReach);
      for (const target of [admin, reader]) {
        await assert.rejects(setPassword(deps(), target.id, 'chosen by an attacker', DELEGATED), outOfReach);
        for (const status of ['disabled', 'enabled'] as const) await assert.rejects(setStatus(deps(), target.id, status, DELEGATED), outOfReach);
        await assert.rejects(updateUser(deps(), target.id, { email: 'attacker@example.com' }, DELEGATED), outOfReach);
        await assert.rejects(deleteUser(deps(), target.id, DELEGATED), outOfReach);
        await assert.rejects(addMember(deps(), 'Staff', target.id, DELEGATED), outOfReach);
        await assert.rejects(removeMember(deps(), target === admin ? ADMINS : READERS, target.id, DELEGATED), outOfReach);
      }
      assert.deepEqual((await groupsOfUser(store, plain.id)).map((g) => g.name), []);
      assert.equal(await store.users.getByUsername(`new-${n}`), undefined);
      // Everyone else stays in reach.
      assert.equal((await addMember(deps(), 'Staff', plain.id, DELEGATED)).changed, true);
      assert.equal((await removeMember(deps(), 'Staff', plain.id, DELEGATED)).changed, true);
      assert.equal((await setStatus(deps(), plain.id, 'disabled', DELEGATED)).status, 'disabled');
      await deleteUser(deps(), plain.id, DELEGATED);
    });

    test('a group marked as an administrator group stays out of reach, with its members, after the settings name another (AD4)', async () => {
      const old = `Old admins ${++n}`;
      // Created while a setting named it: marked. Then the settings name other groups.
      assert.equal((await createGroup(deps(), { name: old }, { groups: { admin: old, readonly: READERS }, administrator: true })).administrator, true);
      assert.equal((await store.groups.getByName('Staff'))?.administrator, false);
      const moved: Authority = { groups: { admin: `Admins ${n}`, readonly: `Readers ${n}` }, administrator: false };
      const member = await user([old]);
      const plain = await user();
      const marked = refusedWith('administrators_only', new RegExp(`is marked as an administrator group \\(it was one; an operator may unmark it\\); only a management administrator may change it`));
      await assert.rejects(addMember(deps(), old, plain.id, moved), marked);
      await assert.rejects(addMember(deps(), old.toUpperCase(), plain.id, moved), marked);
      await assert.rejects(createUser(deps(), { username: `new-${++n}`, groups: [old] }, moved), marked);
      await assert.rejects(removeMember(deps(), old, member.id, moved), marked);
      await assert.rejects(deleteGroup(deps(), old, moved), marked);
      await assert.rejects(setPassword(deps(), member.id, 'chosen by an attacker', moved), marked);
      await assert.rejects(updateUser(deps(), member.id, { email: 'attacker@example.com' }, moved), marked);
      await assert.rejects(deleteUser(deps(), member.id, moved), marked);
      await assert.rejects(addMember(deps(), 'Staff', member.id, moved), marked);
      assert.deepEqual((await groupsOfUser(store, plain.id)).map((g) => g.name), []);
      assert.deepEqual((await groupsOfUser(store, member.id)).map((g) => g.name), [old]);

      // The operator clears the mark on purpose; not while a setting names the group.
      await assert.rejects(unmarkAdministratorGroup(deps(), old, { groups: { admin: ADMINS, readonly: old }, administrator: true }), refusedWith('in_use', /names it, and it stays marked while a setting does$/));
      await assert.rejects(unmarkAdministratorGroup(deps(), old, moved), marked);
      assert.deepEqual(await unmarkAdministratorGroup(deps(), old, { ...moved, administrator: true }).then((r) => [r.group.name, r.group.administrator, r.changed]), [old, false, true]);
      assert.equal((await unmarkAdministratorGroup(deps(), old, { ...moved, administrator: true })).changed, false);
      assert.equal((await store.groups.getByName(old))?.administrator, false);
      // An ordinary group now, in reach.
      assert.equal((await addMember(deps(), old, plain.id, moved)).changed, true);
      await setPassword(deps(), member.id, 'a new password 1', moved);
    });

    test('markAdministratorGroups marks the configured groups that exist, once, and never unmarks one', async () => {
      const [a, b] = [`Mark me ${++n}`, `Mark me too ${n}`];
      await store.groups.insert({ id: crypto.randomUUID(), name: a, description: undefined, createdAt: 0, administrator: false });
      await store.groups.insert({ id: crypto.randomUUID(), name: b, description: undefined, createdAt: 0, administrator: false });
      assert.deepEqual(await markAdministratorGroups(store, { admin: a.toUpperCase(), readonly: b }), [a, b].sort());
      assert.deepEqual(await markAdministratorGroups(store, { admin: a, readonly: b }), []);
      assert.deepEqual(await markAdministratorGroups(store, { admin: ADMINS, readonly: `absent ${n}` }), []);
      assert.equal((await store.groups.getByName(a))?.administrator, true);
      assert.equal((await store.groups.getByName(b))?.administrator, true);
    });

    test('an administrator reaches them: adds, changes and removes administrators', async () => {
      const other = await user();
      assert.equal((await addMember(deps(), ADMINS, other.id, AS_OPERATOR)).changed, true);
      await setPassword(deps(), other.id, 'set by an administrator', AS_OPERATOR);
      assert.equal((await updateUser(deps(), other.id, { username: `renamed-${++n}` }, AS_OPERATOR)).username, `renamed-${n}`);
      assert.equal((await setStatus(deps(), other.id, 'disabled', AS_OPERATOR)).status, 'disabled');
      assert.equal((await removeMember(deps(), ADMINS, other.id, AS_OPERATOR)).changed, true);
      await deleteUser(deps(), other.id, AS_OPERATOR);
    });

    test('the last enabled administrator is kept on every path, administrators asking included; the group is never deleted', async () => {
      const last = await user([ADMINS]);
      await onlyAdministrators(last, await user([], 'disabled'));
      for (const attempt of [
        () => deleteUser(deps(), last.id, AS_OPERATOR),
        () => setStatus(deps(), last.id, 'disabled', AS_OPERATOR),
        () => setStatus(deps(), last.id, 'locked', AS_OPERATOR),
        () => updateUser(deps(), last.id, { status: 'pending' }, AS_OPERATOR),
        () => removeMember(deps(), ADMINS, last.id, AS_OPERATOR),
      ]) {
        await assert.rejects(attempt(), lastAdministrator);
      }
      assert.equal((await store.users.get(last.id))?.status, 'enabled');
      assert.ok(await store.groups.isMember(last.id, ADMINS));
      // Changes that keep the access go through: enabling, renaming, a new password.
      assert.equal((await setStatus(deps(), last.id, 'enabled', AS_OPERATOR)).status, 'enabled');
      await updateUser(deps(), last.id, { givenName: 'Last' }, AS_OPERATOR);
      await assert.rejects(deleteGroup(deps(), ADMINS, AS_OPERATOR), refusedWith('last_administrator', /is the administrators group \(GATEHOUSE_ADMIN_GROUP\); deleting it would leave nobody to manage gatehouse$/));
      await assert.rejects(deleteGroup(deps(), ADMINS.toLowerCase(), AS_OPERATOR), refusedWith('last_administrator', /deleting it would leave nobody/));
      assert.ok(await store.groups.getByName(ADMINS));
    });

    test('two administrators removed at once, through any pair of use cases: exactly one wins', async () => {
      const removals: [string, (u: User) => Promise<unknown>][] = [
        ['removeMember', (u) => removeMember(deps(), ADMINS, u.id, AS_OPERATOR)],
        ['deleteUser', (u) => deleteUser(deps(), u.id, AS_OPERATOR)],
        ['setStatus', (u) => setStatus(deps(), u.id, 'disabled', AS_OPERATOR)],
        ['updateUser', (u) => updateUser(deps(), u.id, { status: 'disabled' }, AS_OPERATOR)],
      ];
      for (const [nameA, removeA] of removals) {
        for (const [nameB, removeB] of removals) {
          for (let round = 0; round < 3; round++) {
            const a = await user([ADMINS]);
            const b = await user([ADMINS]);
            await onlyAdministrators(a, b);
            const outcomes = await Promise.allSettled([removeA(a), removeB(b)]);
            const won = outcomes.filter((o) => o.status === 'fulfilled').length;
            assert.equal(won, 1, `${nameA} vs ${nameB}: ${outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok')).join(' | ')}`);
            const lost = outcomes.find((o) => o.status === 'rejected')!;
            lastAdministrator(lost.reason);
            const group = (await store.groups.getByName(ADMINS))!;
            const enabled = [];
            for (const id of await store.groups.members(group.id)) if ((await store.users.getProfile(id))?.status === 'enabled') enabled.push(id);
            assert.equal(enabled.length, 1, `${nameA} vs ${nameB}`);
          }
        }
      }
    });
  });
}
