import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Group } from '../../src/domain/group.ts';
import { ConflictError, MissingReferenceError, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aGroup, aStoredUser, only, openTestStore, unique, type TestStore } from '../helpers/store.ts';

for (const kind of DATABASES) {
  describe(`group store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    before(async () => {
      harness = await openTestStore(kind);
      store = harness.store;
    });
    after(async () => harness.close());

    async function stored(overrides: Partial<Group> = {}): Promise<Group> {
      const group = aGroup(overrides);
      await store.groups.insert(group);
      return group;
    }

    test('a group round-trips, with and without a description; getByName ignores case', async () => {
      const name = unique('Admins-');
      const group = await stored({ name, description: 'Ylläpitäjät' });
      const bare = await stored({ description: undefined });
      assert.deepEqual(await store.groups.getByName(name), group);
      assert.deepEqual(await store.groups.getByName(name.toUpperCase()), group);
      assert.deepEqual(await store.groups.getByName(name.toLowerCase()), group);
      assert.deepEqual(await store.groups.getByName(bare.name), bare);
      assert.equal(await store.groups.getByName(unique('none-')), undefined);
    });

    test('group names are unique regardless of case', async () => {
      const name = unique('Staff-');
      const group = await stored({ name });
      await assert.rejects(store.groups.insert(aGroup({ name: name.toLowerCase() })), ConflictError);
      await assert.rejects(store.groups.insert(aGroup({ name: name.toUpperCase() })), ConflictError);
      await assert.rejects(store.groups.insert(aGroup({ id: group.id })), ConflictError);
      assert.deepEqual(await store.groups.getByName(name), group);
    });

    test('list returns every group ordered by name, ignoring case', async () => {
      const p = unique('list-');
      const b = await stored({ name: `${p}b` });
      const c = await stored({ name: `${p}C` });
      const a = await stored({ name: `${p}A` });
      assert.deepEqual(only(await store.groups.list(), (g) => g.id, [a.id, b.id, c.id]), [a, b, c]);
    });

    test('addMember is idempotent: true the first time, false the second', async () => {
      const group = await stored();
      const user = await aStoredUser(store);
      assert.equal(await store.groups.addMember(group.id, user.id), true);
      assert.equal(await store.groups.addMember(group.id, user.id), false);
      assert.deepEqual(await store.groups.members(group.id), [user.id]);
    });

    test('addMember with an unknown group or user is a MissingReferenceError', async () => {
      const group = await stored();
      const user = await aStoredUser(store);
      await assert.rejects(store.groups.addMember(group.id, randomUUID()), MissingReferenceError);
      await assert.rejects(store.groups.addMember(randomUUID(), user.id), MissingReferenceError);
      assert.deepEqual(await store.groups.members(group.id), []);
      assert.deepEqual(await store.groups.groupsOf(user.id), []);
    });

    test('removeMember removes one membership: true, then false', async () => {
      const [one, two] = [await stored(), await stored()];
      const [alice, bob] = [await aStoredUser(store), await aStoredUser(store)];
      for (const g of [one, two]) for (const u of [alice, bob]) await store.groups.addMember(g.id, u.id);
      assert.equal(await store.groups.removeMember(one.id, alice.id), true);
      assert.equal(await store.groups.removeMember(one.id, alice.id), false);
      assert.deepEqual(await store.groups.members(one.id), [bob.id]);
      assert.deepEqual([...(await store.groups.members(two.id))].sort(), [alice.id, bob.id].sort());
      assert.deepEqual(await store.groups.groupsOf(alice.id), [two]);
    });

    test('members lists the user ids of a group; empty for an unknown group', async () => {
      const group = await stored();
      const users = [await aStoredUser(store), await aStoredUser(store), await aStoredUser(store)];
      for (const u of users) await store.groups.addMember(group.id, u.id);
      assert.deepEqual([...(await store.groups.members(group.id))].sort(), users.map((u) => u.id).sort());
      assert.deepEqual(await store.groups.members(randomUUID()), []);
    });

    test('groupsOf lists the groups of a user ordered by name, ignoring case', async () => {
      const p = unique('of-');
      const b = await stored({ name: `${p}B` });
      const a = await stored({ name: `${p}a` });
      await stored({ name: `${p}c` });
      const user = await aStoredUser(store);
      await store.groups.addMember(b.id, user.id);
      await store.groups.addMember(a.id, user.id);
      assert.deepEqual(await store.groups.groupsOf(user.id), [a, b]);
      assert.deepEqual(await store.groups.groupsOf((await aStoredUser(store)).id), []);
    });

    test('isMember looks the group up by name, ignoring case', async () => {
      const name = unique('Editors-');
      const group = await stored({ name });
      const [member, outsider] = [await aStoredUser(store), await aStoredUser(store)];
      await store.groups.addMember(group.id, member.id);
      assert.equal(await store.groups.isMember(member.id, name), true);
      assert.equal(await store.groups.isMember(member.id, name.toUpperCase()), true);
      assert.equal(await store.groups.isMember(member.id, name.toLowerCase()), true);
      assert.equal(await store.groups.isMember(outsider.id, name), false);
      assert.equal(await store.groups.isMember(member.id, unique('other-')), false);
    });

    test('delete removes the group and its memberships, not the users or other groups: true, then false', async () => {
      const [doomed, kept] = [await stored(), await stored()];
      const [alice, bob] = [await aStoredUser(store), await aStoredUser(store)];
      for (const u of [alice, bob]) {
        await store.groups.addMember(doomed.id, u.id);
        await store.groups.addMember(kept.id, u.id);
      }
      assert.equal(await store.groups.delete(doomed.id), true);
      assert.equal(await store.groups.delete(doomed.id), false);
      assert.equal(await store.groups.getByName(doomed.name), undefined);
      assert.deepEqual(await store.groups.members(doomed.id), []);
      assert.deepEqual(await store.groups.groupsOf(alice.id), [kept]);
      assert.deepEqual([...(await store.groups.members(kept.id))].sort(), [alice.id, bob.id].sort());
      assert.equal((await store.users.get(bob.id))?.id, bob.id);
      // The name is free again.
      await stored({ name: doomed.name });
      await assert.rejects(store.groups.addMember(doomed.id, alice.id), MissingReferenceError);
    });
  });
}
