import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { User } from '../../src/domain/user.ts';
import { ConflictError, MissingReferenceError, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aGroup, anOrganization, aSession, aStoredUser, aUser, openTestStore, T0, unique, withTestStore, type TestStore } from '../helpers/store.ts';

const ids = (users: { id: string }[]) => users.map((u) => u.id);

for (const kind of DATABASES) {
  describe(`user store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    before(async () => {
      harness = await openTestStore(kind);
      store = harness.store;
    });
    after(async () => harness.close());

    test('a user round-trips every field, multi-valued attributes in their order', async () => {
      const org = anOrganization();
      await store.organizations.insert(org);
      const user = aUser({
        organizationId: org.id,
        status: 'locked',
        givenName: 'Åsa',
        familyName: 'Öberg',
        attributes: { roles: ['zeta', 'alpha', 'mid'], mobile: ['+358 40 123'], empty_string: [''] },
        createdAt: T0 + 1,
        updatedAt: T0 + 2,
      });
      await store.users.insert(user, 'argon2-hash');
      assert.deepEqual(await store.users.get(user.id), user);
      const { attributes: _attributes, ...profile } = user;
      assert.deepEqual(await store.users.getProfile(user.id), profile, 'getProfile: every field but the attributes');
    });

    test('a user with no optionals round-trips with undefined fields and no attributes', async () => {
      const user = aUser({ givenName: undefined, familyName: undefined, email: undefined, organizationId: undefined, status: 'pending' });
      await store.users.insert(user, undefined);
      assert.deepEqual(await store.users.get(user.id), user);
    });

    test('unknown ids and usernames are undefined', async () => {
      assert.equal(await store.users.get(randomUUID()), undefined);
      assert.equal(await store.users.getProfile(randomUUID()), undefined);
      assert.equal(await store.users.getByUsername(unique('nobody-')), undefined);
      assert.equal(await store.users.getCredentials(unique('nobody-')), undefined);
    });

    test('usernames are unique regardless of case: Alice then alice is a ConflictError', async () => {
      const name = unique('Alice-');
      const alice = await aStoredUser(store, { username: name });
      await assert.rejects(store.users.insert(aUser({ username: name.toLowerCase() }), undefined), ConflictError);
      await assert.rejects(store.users.insert(aUser({ username: name.toUpperCase() }), undefined), ConflictError);
      assert.deepEqual(await store.users.getByUsername(name), alice);
    });

    test('a duplicate id is a ConflictError', async () => {
      const user = await aStoredUser(store);
      await assert.rejects(store.users.insert(aUser({ id: user.id }), undefined), ConflictError);
    });

    test('getByUsername ignores case and keeps the username as registered', async () => {
      const name = unique('MiXeD-');
      const user = await aStoredUser(store, { username: name });
      assert.deepEqual(await store.users.getByUsername(name.toLowerCase()), user);
      assert.deepEqual(await store.users.getByUsername(name.toUpperCase()), user);
      assert.equal((await store.users.getByUsername(name.toUpperCase()))?.username, name);
    });

    test('getCredentials returns the user without attributes and its password hash, case-insensitively; undefined hash when none was set', async () => {
      const name = unique('Cred-');
      const { attributes: _attributes, ...user } = await aStoredUser(store, { username: name, attributes: { colour: ['blue'] } }, '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA');
      assert.deepEqual(await store.users.getCredentials(name.toUpperCase()), { user, passwordHash: '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA' });
      const { attributes: _none, ...none } = await aStoredUser(store);
      assert.deepEqual(await store.users.getCredentials(none.username), { user: none, passwordHash: undefined });
    });

    test('setPasswordHash replaces the hash and updatedAt; false for an unknown user', async () => {
      const user = await aStoredUser(store, {}, 'old-hash');
      assert.equal(await store.users.setPasswordHash(user.id, 'new-hash', T0 + 9000), true);
      const credentials = await store.users.getCredentials(user.username);
      assert.equal(credentials?.passwordHash, 'new-hash');
      assert.equal(credentials?.user.updatedAt, T0 + 9000);
      assert.equal(await store.users.setPasswordHash(randomUUID(), 'x', T0), false);
    });

    test('an unknown organizationId is a MissingReferenceError and stores nothing', async () => {
      const user = aUser({ organizationId: randomUUID(), attributes: { a: ['1'] } });
      await assert.rejects(store.users.insert(user, undefined), MissingReferenceError);
      assert.equal(await store.users.get(user.id), undefined);
      assert.equal(await store.users.getByUsername(user.username), undefined);
    });

    test('update changes fields and replaces attributes, keeping the password hash', async () => {
      const org = anOrganization();
      await store.organizations.insert(org);
      const user = await aStoredUser(store, { attributes: { keep: ['1', '2'], drop: ['x'] } }, 'the-hash');
      const changed: User = {
        ...user,
        username: unique('renamed-'),
        status: 'disabled',
        givenName: undefined,
        email: 'new@example.com',
        organizationId: org.id,
        attributes: { keep: ['2', '1', '3'], added: ['y'] },
        updatedAt: T0 + 100,
      };
      assert.equal(await store.users.update(changed), true);
      assert.deepEqual(await store.users.get(user.id), changed);
      assert.equal(await store.users.getByUsername(user.username), undefined, 'the old username no longer finds it');
      assert.equal((await store.users.getCredentials(changed.username))?.passwordHash, 'the-hash');
    });

    test('update to a username taken by another user (in any case) is a ConflictError and changes nothing', async () => {
      const taken = await aStoredUser(store, { username: unique('Taken-') });
      const user = await aStoredUser(store, { attributes: { a: ['1'] } });
      await assert.rejects(store.users.update({ ...user, username: taken.username.toUpperCase(), attributes: {} }), ConflictError);
      assert.deepEqual(await store.users.get(user.id), user);
    });

    test('update to an unknown organization is a MissingReferenceError; update of an unknown user is false', async () => {
      const user = await aStoredUser(store);
      await assert.rejects(store.users.update({ ...user, organizationId: randomUUID() }), MissingReferenceError);
      assert.deepEqual(await store.users.get(user.id), user);
      assert.equal(await store.users.update(aUser()), false);
    });

    test('delete returns true, then false, and takes attributes, group memberships and sessions with it', async () => {
      const user = await aStoredUser(store, { attributes: { colour: ['red', 'blue'] } });
      const group = aGroup();
      await store.groups.insert(group);
      await store.groups.addMember(group.id, user.id);
      const session = aSession({ userId: user.id });
      await store.sessions.insert(session);

      assert.equal(await store.users.delete(user.id), true);
      assert.equal(await store.users.get(user.id), undefined);
      assert.equal(await store.users.delete(user.id), false);
      assert.deepEqual(await store.groups.members(group.id), []);
      assert.equal(await store.groups.isMember(user.id, group.name), false);
      assert.equal(await store.sessions.findLive(session.idHash, T0), undefined);
      assert.equal(await store.sessions.findLiveByIndex(session.sessionIndex, T0), undefined);
      // Nothing of the old user lingers for a new one with the same id to inherit.
      const reborn = aUser({ id: user.id, attributes: {} });
      await store.users.insert(reborn, undefined);
      assert.deepEqual(await store.users.get(user.id), reborn);
      assert.deepEqual(await store.groups.groupsOf(user.id), []);
      await assert.doesNotReject(store.sessions.insert(aSession({ userId: user.id, idHash: session.idHash, sessionIndex: session.sessionIndex })));
    });

    describe('list', () => {
      test('filters by username prefix, case-insensitively, ordered by username', async () => {
        const p = unique('pre-');
        const bob = await aStoredUser(store, { username: `${p}Bob` });
        const alice = await aStoredUser(store, { username: `${p}alice` });
        const albert = await aStoredUser(store, { username: `${p}ALBERT` });
        await aStoredUser(store, { username: `x${p}alex` });
        assert.deepEqual(ids(await store.users.list({ filters: { username: p } })), ids([albert, alice, bob]));
        assert.deepEqual(ids(await store.users.list({ filters: { username: `${p}AL` } })), ids([albert, alice]));
      });

      test('exactMatch matches the whole value only', async () => {
        const p = unique('exact-');
        const ann = await aStoredUser(store, { username: `${p}ann` });
        await aStoredUser(store, { username: `${p}anna` });
        assert.deepEqual(ids(await store.users.list({ filters: { username: `${p}ann` }, exactMatch: true })), ids([ann]));
        assert.equal((await store.users.list({ filters: { username: `${p}an` }, exactMatch: true })).length, 0);
        assert.equal((await store.users.list({ filters: { username: `${p}ann` }, exactMatch: false })).length, 2);
      });

      test('filters by email, status, givenName and familyName columns, all filters applying at once', async () => {
        const p = unique('col-');
        const a = await aStoredUser(store, { email: `${p}@one.example`, status: 'enabled', givenName: `${p}Anna`, familyName: `${p}Smith` });
        const b = await aStoredUser(store, { email: `${p}@two.example`, status: 'disabled', givenName: `${p}Anna`, familyName: `${p}Jones` });
        assert.deepEqual(ids(await store.users.list({ filters: { email: `${p}@one` } })), ids([a]));
        assert.deepEqual(ids(await store.users.list({ filters: { email: p, status: 'disabled' } })), ids([b]));
        assert.deepEqual(new Set(ids(await store.users.list({ filters: { givenName: `${p}anna` } }))), new Set(ids([a, b])));
        assert.deepEqual(ids(await store.users.list({ filters: { givenName: `${p}Anna`, familyName: `${p}Jo` } })), ids([b]));
        assert.deepEqual(ids(await store.users.list({ filters: { email: `${p}@two.example`, status: 'disabled' }, exactMatch: true })), ids([b]));
        assert.deepEqual(await store.users.list({ filters: { email: `${p}@two.example`, status: 'enabled' }, exactMatch: true }), []);
      });

      test('filters by a custom attribute, matching any of its values', async () => {
        const p = unique('attr-');
        const sales = await aStoredUser(store, { attributes: { [`${p}dept`]: ['Sales', 'Support'] } });
        const it = await aStoredUser(store, { attributes: { [`${p}dept`]: ['IT'], other: ['Support'] } });
        assert.deepEqual(ids(await store.users.list({ filters: { [`${p}dept`]: 'support' } })), ids([sales]));
        assert.deepEqual(ids(await store.users.list({ filters: { [`${p}dept`]: 'IT' }, exactMatch: true })), ids([it]));
        assert.deepEqual(ids(await store.users.list({ filters: { [`${p}dept`]: 'Sup' }, exactMatch: true })), []);
        assert.deepEqual(await store.users.list({ filters: { [`${p}missing`]: '' } }), []);
      });

      test('a custom attribute and a column filter combine', async () => {
        const p = unique('combo-');
        const wanted = await aStoredUser(store, { username: `${p}a`, attributes: { [`${p}x`]: ['1'] } });
        await aStoredUser(store, { username: `${p}b`, attributes: { [`${p}x`]: ['2'] } });
        await aStoredUser(store, { username: `other-${p}`, attributes: { [`${p}x`]: ['1'] } });
        assert.deepEqual(ids(await store.users.list({ filters: { username: p, [`${p}x`]: '1' } })), ids([wanted]));
      });

      test('prefix matching ignores case beyond ASCII', async () => {
        const p = unique('uni-');
        const user = await aStoredUser(store, { username: `${p}ÄIJÄLÄ`, attributes: { [`${p}city`]: ['ÅBO'] } });
        assert.deepEqual(ids(await store.users.list({ filters: { username: `${p}äijä` } })), ids([user]));
        assert.deepEqual(ids(await store.users.list({ filters: { [`${p}city`]: 'åb' } })), ids([user]));
      });

      for (const [meta, literal, lookalike] of [
        ['_', 'a_', 'ab'],
        ['%', 'a%', 'abc'],
        ['\\', 'a\\', 'ab'],
        ['\\_', 'a\\_', 'a\\x'],
      ] as const) {
        test(`"${meta}" in a filter value matches itself only (${literal} does not find ${lookalike})`, async () => {
          const p = unique('meta-');
          const literalUser = await aStoredUser(store, { username: `${p}${literal}z`, email: `${p}${literal}z@example.com`, attributes: { [`${p}v`]: [`${literal}z`] } });
          await aStoredUser(store, { username: `${p}${lookalike}z`, email: `${p}${lookalike}z@example.com`, attributes: { [`${p}v`]: [`${lookalike}z`] } });
          assert.deepEqual(ids(await store.users.list({ filters: { username: `${p}${literal}` } })), ids([literalUser]));
          assert.deepEqual(ids(await store.users.list({ filters: { email: `${p}${literal}` } })), ids([literalUser]));
          assert.deepEqual(ids(await store.users.list({ filters: { [`${p}v`]: literal } })), ids([literalUser]));
          assert.deepEqual(ids(await store.users.list({ filters: { [`${p}v`]: `${literal}z` }, exactMatch: true })), ids([literalUser]));
        });
      }

      test('limit caps the result; 0 means no limit', async () => {
        const p = unique('lim-');
        const users = [];
        for (const n of ['c', 'a', 'd', 'b']) users.push(await aStoredUser(store, { username: `${p}${n}` }));
        const sorted = [...users].sort((x, y) => x.username.localeCompare(y.username));
        assert.deepEqual(ids(await store.users.list({ filters: { username: p }, limit: 2 })), ids(sorted.slice(0, 2)));
        assert.deepEqual(ids(await store.users.list({ filters: { username: p }, limit: 0 })), ids(sorted));
        assert.deepEqual(ids(await store.users.list({ filters: { username: p }, limit: 10 })), ids(sorted));
      });

      test('organizationIds keeps users of those organizations only; an empty list finds none', async () => {
        const p = unique('orgs-');
        const [one, two, three] = [anOrganization(), anOrganization(), anOrganization()];
        for (const o of [one!, two!, three!]) await store.organizations.insert(o);
        const a = await aStoredUser(store, { username: `${p}a`, organizationId: one!.id });
        const b = await aStoredUser(store, { username: `${p}b`, organizationId: two!.id });
        await aStoredUser(store, { username: `${p}c`, organizationId: three!.id });
        await aStoredUser(store, { username: `${p}d` });
        assert.deepEqual(ids(await store.users.list({ filters: { username: p }, organizationIds: [one!.id, two!.id] })), ids([a, b]));
        assert.deepEqual(ids(await store.users.list({ organizationIds: [one!.id] })), ids([a]));
        assert.deepEqual(await store.users.list({ organizationIds: [] }), []);
      });

      test('a listing reads the users table alone: profiles without attributes, or ids, even with the attribute table gone (security test finding 10)', async () => {
        // Its own database: the attribute table is renamed away, so a listing that read it fails.
        await withTestStore(kind, async (own) => {
          const p = unique('bare-');
          const org = anOrganization();
          await own.organizations.insert(org);
          // Large attributes: 100 values of 255 characters each, the most one attribute may hold.
          const large = { notes: Array.from({ length: 100 }, (_, i) => String(i).padEnd(255, 'x')) };
          const users: User[] = [];
          for (const n of ['c', 'a', 'b']) users.push(await aStoredUser(own, { username: `${p}${n}`, organizationId: org.id, attributes: large }));
          const inOrder = [...users].sort((x, y) => x.username.localeCompare(y.username));
          await sql`alter table user_attributes rename to user_attributes_elsewhere`.execute(own.database.db);
          assert.deepEqual(
            await own.users.list({ filters: { username: p } }),
            inOrder.map(({ attributes: _attributes, ...profile }) => profile),
          );
          assert.deepEqual(await own.users.listIds({ filters: { username: p } }), ids(inOrder));
          assert.deepEqual(await own.users.listIds({ organizationIds: [org.id], limit: 2 }), ids(inOrder.slice(0, 2)));
          assert.deepEqual(await own.users.listIds({ organizationIds: [] }), []);
        });
      });
    });
  });
}
