/**
 * The keyset pages of the management API's lists (UserStore.page, GroupStore.page and memberPage,
 * OrganizationStore.page, SessionStore.pageOfUser) and SessionStore.endOfUser, on every database.
 * Each test works under its own unique prefix (`q`) or user, so tests sharing the database never
 * see each other's rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { normalizeUsername } from '../../src/domain/user.ts';
import type { OrganizationPageKey, PageQuery, SessionPageKey, Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aGroup, anOrganization, aSession, aSessionIndex, aStoredUser, openTestStore, T0, unique, type TestStore } from '../helpers/store.ts';

/** Every row of a list, fetched `size` at a time (asking one more, as the routes do), with `between` run after each page. */
async function pageThrough<R, K>(fetch: (query: PageQuery<K>) => Promise<R[]>, keyOf: (row: R) => K, size: number, between: (page: number) => Promise<void> = async () => {}): Promise<R[]> {
  const seen: R[] = [];
  let afterKey: K | undefined;
  for (let page = 0; page < 100; page++) {
    const rows = await fetch({ after: afterKey, limit: size + 1 });
    const shown = rows.slice(0, size);
    seen.push(...shown);
    if (rows.length <= size) return seen;
    afterKey = keyOf(shown[shown.length - 1]!);
    await between(page);
  }
  throw new Error('paging did not end');
}

for (const kind of DATABASES) {
  describe(`keyset pages on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    before(async () => {
      harness = await openTestStore(kind);
      store = harness.store;
    });
    after(async () => harness.close());

    test('users page in case-insensitive username order; q matches username, email and names case-insensitively', async () => {
      const p = unique('pg');
      const c = await aStoredUser(store, { username: `${p}-Carol` });
      const a = await aStoredUser(store, { username: `${p}-alice` });
      const b = await aStoredUser(store, { username: `${p}-Bob` });
      const all = await pageThrough((query: PageQuery<string>) => store.users.page({ ...query, q: p.toUpperCase() }), (u) => normalizeUsername(u.username), 2);
      assert.deepEqual(all.map((u) => u.id), [a.id, b.id, c.id]);
      const { attributes: _attributes, ...profile } = a;
      assert.deepEqual(all[0], profile);

      const mark = unique('Mark');
      const byEmail = await aStoredUser(store, { email: `${mark}@Example.org` });
      const byGiven = await aStoredUser(store, { givenName: `X${mark}Y` });
      const byFamily = await aStoredUser(store, { familyName: mark.toUpperCase() });
      const found = await store.users.page({ q: mark.toLowerCase(), limit: 10 });
      assert.deepEqual(new Set(found.map((u) => u.id)), new Set([byEmail.id, byGiven.id, byFamily.id]));
      // LIKE wildcards in q are literal.
      assert.deepEqual(await store.users.page({ q: `${p}%`, limit: 10 }), []);
      assert.deepEqual(await store.users.page({ q: `${p.slice(0, 3)}_${p.slice(4)}`, limit: 10 }), []);
    });

    test('users page filters by status, group and organization', async () => {
      const p = unique('flt');
      const organization = anOrganization();
      await store.organizations.insert(organization);
      const group = aGroup();
      await store.groups.insert(group);
      const enabled = await aStoredUser(store, { username: `${p}-1`, organizationId: organization.id });
      const disabled = await aStoredUser(store, { username: `${p}-2`, status: 'disabled' });
      const member = await aStoredUser(store, { username: `${p}-3` });
      await store.groups.addMember(group.id, member.id);
      const ids = async (query: Omit<Parameters<Store['users']['page']>[0], 'limit'>) => (await store.users.page({ ...query, q: p, limit: 10 })).map((u) => u.id);
      assert.deepEqual(await ids({}), [enabled.id, disabled.id, member.id]);
      assert.deepEqual(await ids({ status: 'disabled' }), [disabled.id]);
      assert.deepEqual(await ids({ organizationId: organization.id }), [enabled.id]);
      assert.deepEqual(await ids({ groupId: group.id }), [member.id]);
      assert.deepEqual(await ids({ groupId: group.id, status: 'disabled' }), []);
    });

    test('users paging is stable under concurrent inserts: no row twice, none skipped, those inserted before the cursor not shown', async () => {
      const p = unique('st');
      const initial = [];
      for (const letter of ['b', 'd', 'f', 'h', 'j']) initial.push(await aStoredUser(store, { username: `${p}-${letter}` }));
      const inserted: string[] = [];
      const all = await pageThrough(
        (query: PageQuery<string>) => store.users.page({ ...query, q: p }),
        (u) => normalizeUsername(u.username),
        2,
        async (page) => {
          // One row sorting before every page shown so far (an OFFSET would shift and repeat a row), one after.
          await aStoredUser(store, { username: `${p}-a${page}` });
          const later = await aStoredUser(store, { username: `${p}-z${page}` });
          inserted.push(later.id);
        },
      );
      const ids = all.map((u) => u.id);
      assert.equal(new Set(ids).size, ids.length, 'no user twice');
      assert.deepEqual(ids.slice(0, 5), initial.map((u) => u.id));
      assert.deepEqual(new Set(ids.slice(5)), new Set(inserted));
    });

    test('groups page by case-insensitive name with q; memberPage pages members by username', async () => {
      const p = unique('gp');
      const b = aGroup({ name: `${p}-B` });
      const a = aGroup({ name: `${p}-a` });
      const c = aGroup({ name: `X-${p}-c` });
      for (const g of [b, a, c]) await store.groups.insert(g);
      const all = await pageThrough((query: PageQuery<string>) => store.groups.page({ ...query, q: p.toUpperCase() }), (g) => normalizeUsername(g.name), 1);
      assert.deepEqual(all, [a, b, c]);

      const users = [];
      for (const name of ['m3', 'M1', 'm2']) users.push(await aStoredUser(store, { username: `${p}-${name}` }));
      await aStoredUser(store, { username: `${p}-m0` }); // not a member
      for (const u of users) await store.groups.addMember(a.id, u.id);
      const members = await pageThrough((query: PageQuery<string>) => store.groups.memberPage(a.id, query), (u) => normalizeUsername(u.username), 2);
      assert.deepEqual(members.map((u) => u.username), [`${p}-M1`, `${p}-m2`, `${p}-m3`]);
      assert.deepEqual(await store.groups.memberPage(b.id, { limit: 5 }), []);
    });

    test('organizations page by (technical name, id): equal names under different parents are each shown once', async () => {
      const p = unique('op');
      const parent = anOrganization({ technicalName: `${p}-parent` });
      await store.organizations.insert(parent);
      const twin1 = anOrganization({ technicalName: `${p}-twin` });
      const twin2 = anOrganization({ technicalName: `${p}-twin`, parentId: parent.id });
      const named = anOrganization({ technicalName: unique('other'), friendlyName: `Friendly ${p.toUpperCase()}` });
      for (const o of [twin1, twin2, named]) await store.organizations.insert(o);
      const all = await pageThrough((query: PageQuery<OrganizationPageKey>) => store.organizations.page({ ...query, q: p }), (o) => ({ technicalName: o.technicalName, id: o.id }), 1);
      const twins = [twin1, twin2].sort((x, y) => (x.id < y.id ? -1 : 1));
      assert.deepEqual(all.map((o) => o.id), [parent.id, ...twins.map((o) => o.id), named.id]);
      assert.deepEqual(all.find((o) => o.id === twin2.id), twin2);
    });

    test("a user's live sessions page newest first by (created_at, session_index); expired ones and other users' are left out", async () => {
      const user = await aStoredUser(store);
      const other = await aStoredUser(store);
      const sessions = [];
      for (const [createdAt, sessionIndex] of [
        [T0 + 1, `_${'a'.repeat(40)}`],
        [T0 + 2, `_${'b'.repeat(40)}`],
        [T0 + 2, `_${'c'.repeat(40)}`],
        [T0 + 3, aSessionIndex()],
      ] as const) {
        const session = aSession({ userId: user.id, createdAt, sessionIndex });
        await store.sessions.insert(session);
        sessions.push(session);
      }
      await store.sessions.insert(aSession({ userId: user.id, createdAt: T0 + 4, expiresAt: T0 + 5 })); // idle deadline passed at T0 + 10
      await store.sessions.insert(aSession({ userId: user.id, createdAt: T0 + 4, maxExpiresAt: T0 + 5 })); // absolute deadline passed
      await store.sessions.insert(aSession({ userId: other.id, createdAt: T0 + 5 }));
      const all = await pageThrough((query: PageQuery<SessionPageKey>) => store.sessions.pageOfUser(user.id, T0 + 10, query), (s) => ({ createdAt: s.createdAt, sessionIndex: s.sessionIndex }), 1);
      assert.deepEqual(all, [sessions[3], sessions[2], sessions[1], sessions[0]]);
    });

    test('endOfUser ends only a session of that user', async () => {
      const user = await aStoredUser(store);
      const other = await aStoredUser(store);
      const session = aSession({ userId: user.id });
      await store.sessions.insert(session);
      assert.equal(await store.sessions.endOfUser(other.id, session.sessionIndex), undefined);
      assert.deepEqual(await store.sessions.findLiveByIndex(session.sessionIndex, T0), session);
      assert.deepEqual(await store.sessions.endOfUser(user.id, session.sessionIndex), session);
      assert.equal(await store.sessions.findLiveByIndex(session.sessionIndex, T0), undefined);
      assert.equal(await store.sessions.endOfUser(user.id, session.sessionIndex), undefined);
    });
  });
}
