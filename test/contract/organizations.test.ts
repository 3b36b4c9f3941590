import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Organization } from '../../src/domain/organization.ts';
import { ConflictError, MissingReferenceError, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { anOrganization, openTestStore, T0, unique, type TestStore } from '../helpers/store.ts';

const ids = (orgs: Organization[]) => orgs.map((o) => o.id);
const sorted = (values: string[]) => [...values].sort();

for (const kind of DATABASES) {
  describe(`organization store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    before(async () => {
      harness = await openTestStore(kind);
      store = harness.store;
    });
    after(async () => harness.close());

    async function stored(overrides: Partial<Organization> = {}): Promise<Organization> {
      const org = anOrganization(overrides);
      await store.organizations.insert(org);
      return org;
    }

    test('an organization round-trips every field, multi-valued attributes in their order', async () => {
      const parent = await stored();
      const org = anOrganization({ parentId: parent.id, friendlyName: 'Östra Åbo Oy', type: 'department', virtual: true, attributes: { codes: ['3', '1', '2'], vat: ['FI123'] }, createdAt: T0 + 1, updatedAt: T0 + 2 });
      await store.organizations.insert(org);
      assert.deepEqual(await store.organizations.get(org.id), org);
    });

    test('a root organization with no optionals round-trips; an unknown id is undefined', async () => {
      const org = await stored({ parentId: undefined, type: undefined, virtual: false, attributes: {} });
      assert.deepEqual(await store.organizations.get(org.id), org);
      assert.equal(await store.organizations.get(randomUUID()), undefined);
    });

    test('siblings have distinct technical names; other parents may reuse them', async () => {
      const [left, right] = [await stored(), await stored()];
      const name = unique('dept-');
      const first = await stored({ parentId: left.id, technicalName: name });
      await assert.rejects(store.organizations.insert(anOrganization({ parentId: left.id, technicalName: name })), ConflictError);
      const cousin = await stored({ parentId: right.id, technicalName: name });
      assert.deepEqual(await store.organizations.get(first.id), first);
      assert.deepEqual(await store.organizations.get(cousin.id), cousin);
      // A parent may share its child's name.
      await assert.doesNotReject(store.organizations.insert(anOrganization({ parentId: first.id, technicalName: name })));
    });

    test('two roots with the same technical name are a ConflictError', async () => {
      const root = await stored({ parentId: undefined });
      const twin = anOrganization({ parentId: undefined, technicalName: root.technicalName });
      await assert.rejects(store.organizations.insert(twin), ConflictError);
      assert.equal(await store.organizations.get(twin.id), undefined);
    });

    test('an unknown parent is a MissingReferenceError', async () => {
      const orphan = anOrganization({ parentId: randomUUID() });
      await assert.rejects(store.organizations.insert(orphan), MissingReferenceError);
      assert.equal(await store.organizations.get(orphan.id), undefined);
    });

    test('subtreeIds lists an organization and everything below it, at every depth', async () => {
      const root = await stored();
      const a = await stored({ parentId: root.id });
      const b = await stored({ parentId: root.id });
      const a1 = await stored({ parentId: a.id });
      const a2 = await stored({ parentId: a.id });
      const b1 = await stored({ parentId: b.id });
      const a1x = await stored({ parentId: a1.id });
      await stored(); // unrelated
      assert.deepEqual(sorted(await store.organizations.subtreeIds(root.id)), sorted(ids([root, a, b, a1, a2, b1, a1x])));
      assert.deepEqual(sorted(await store.organizations.subtreeIds(a.id)), sorted(ids([a, a1, a2, a1x])));
      assert.deepEqual(await store.organizations.subtreeIds(b1.id), [b1.id]);
      assert.deepEqual(await store.organizations.subtreeIds(randomUUID()), []);
    });

    test('update replaces fields and attributes; false for an unknown organization', async () => {
      const [from, to] = [await stored(), await stored()];
      const org = await stored({ parentId: from.id, attributes: { a: ['1'], b: ['2'] } });
      const changed: Organization = { ...org, parentId: to.id, technicalName: unique('moved-'), friendlyName: 'Moved', type: undefined, virtual: true, attributes: { a: ['9', '8'] }, updatedAt: T0 + 50 };
      assert.equal(await store.organizations.update(changed), true);
      assert.deepEqual(await store.organizations.get(org.id), changed);
      assert.deepEqual(sorted(await store.organizations.subtreeIds(to.id)), sorted([to.id, org.id]));
      assert.deepEqual(await store.organizations.subtreeIds(from.id), [from.id]);
      assert.equal(await store.organizations.update(anOrganization()), false);
    });

    test("update to a sibling's name is a ConflictError, to an unknown parent a MissingReferenceError; neither changes anything", async () => {
      const parent = await stored();
      const sibling = await stored({ parentId: parent.id });
      const org = await stored({ parentId: parent.id, attributes: { keep: ['me'] } });
      await assert.rejects(store.organizations.update({ ...org, technicalName: sibling.technicalName, attributes: {} }), ConflictError);
      await assert.rejects(store.organizations.update({ ...org, parentId: randomUUID(), attributes: {} }), MissingReferenceError);
      assert.deepEqual(await store.organizations.get(org.id), org);
    });

    test('delete returns true, then false', async () => {
      const org = await stored({ attributes: { x: ['1'] } });
      assert.equal(await store.organizations.delete(org.id), true);
      assert.equal(await store.organizations.get(org.id), undefined);
      assert.equal(await store.organizations.delete(org.id), false);
      // Its attributes went with it: a new organization with the same id starts clean.
      const reborn = anOrganization({ id: org.id, attributes: {} });
      await store.organizations.insert(reborn);
      assert.deepEqual(await store.organizations.get(org.id), reborn);
    });

    test('deleting an organization that has children is refused and deletes nothing', async () => {
      const parent = await stored({ attributes: { x: ['1'] } });
      const child = await stored({ parentId: parent.id });
      const grandchild = await stored({ parentId: child.id });
      await assert.rejects(store.organizations.delete(parent.id), (error) => error instanceof MissingReferenceError || error instanceof ConflictError);
      await assert.rejects(store.organizations.delete(child.id), (error) => error instanceof MissingReferenceError || error instanceof ConflictError);
      assert.deepEqual(await store.organizations.get(parent.id), parent);
      assert.deepEqual(await store.organizations.get(child.id), child);
      assert.deepEqual(sorted(await store.organizations.subtreeIds(parent.id)), sorted(ids([parent, child, grandchild])));
      // Leaves first, then it goes.
      assert.equal(await store.organizations.delete(grandchild.id), true);
      assert.equal(await store.organizations.delete(child.id), true);
      assert.equal(await store.organizations.delete(parent.id), true);
    });

    describe('list', () => {
      test('filters by technicalName prefix case-insensitively, ordered by technical name', async () => {
        const p = unique('tn-');
        const b = await stored({ technicalName: `${p}beta` });
        const a = await stored({ technicalName: `${p}Alpha` });
        const c = await stored({ technicalName: `${p}alps` });
        await stored({ technicalName: `x${p}alpha` });
        const all = await store.organizations.list({ filters: { technicalName: p } });
        assert.deepEqual(new Set(ids(all)), new Set(ids([a, b, c])));
        assert.equal(all.at(-1)?.id, b.id);
        assert.deepEqual(new Set(ids(await store.organizations.list({ filters: { technicalName: `${p}AL` } }))), new Set(ids([a, c])));
      });

      test('exactMatch matches the whole value only', async () => {
        const p = unique('ex-');
        const org = await stored({ technicalName: `${p}acme` });
        await stored({ technicalName: `${p}acme2` });
        assert.deepEqual(ids(await store.organizations.list({ filters: { technicalName: `${p}acme` }, exactMatch: true })), ids([org]));
        assert.equal((await store.organizations.list({ filters: { technicalName: `${p}acme` } })).length, 2);
      });

      test('filters by friendlyName, type and a custom attribute together', async () => {
        const p = unique('fn-');
        const wanted = await stored({ friendlyName: `${p} Oy`, type: `${p}company`, attributes: { [`${p}vat`]: ['FI1', 'FI2'] } });
        await stored({ friendlyName: `${p} Ab`, type: `${p}company`, attributes: { [`${p}vat`]: ['FI2'] } });
        await stored({ friendlyName: `${p} Oy`, type: `${p}unit`, attributes: { [`${p}vat`]: ['FI2'] } });
        assert.deepEqual(ids(await store.organizations.list({ filters: { friendlyName: `${p} o`, type: `${p}comp`, [`${p}vat`]: 'fi2' } })), ids([wanted]));
        assert.deepEqual(ids(await store.organizations.list({ filters: { [`${p}vat`]: 'FI1' }, exactMatch: true })), ids([wanted]));
      });

      test('LIKE wildcards in a filter value match literally', async () => {
        const p = unique('wild-');
        const literal = await stored({ technicalName: `${p}a_%\\z`, attributes: { [`${p}k`]: ['a_%\\z'] } });
        await stored({ technicalName: `${p}ab%\\z`, attributes: { [`${p}k`]: ['ab%\\z'] } });
        await stored({ technicalName: `${p}a_xyz`, attributes: { [`${p}k`]: ['a_xyz'] } });
        assert.deepEqual(ids(await store.organizations.list({ filters: { technicalName: `${p}a_%\\` } })), ids([literal]));
        assert.deepEqual(ids(await store.organizations.list({ filters: { [`${p}k`]: 'a_%' } })), ids([literal]));
      });

      test('limit caps the result; 0 means no limit', async () => {
        const p = unique('lim-');
        for (const n of ['c', 'a', 'b']) await stored({ technicalName: `${p}${n}` });
        assert.deepEqual(
          (await store.organizations.list({ filters: { technicalName: p }, limit: 2 })).map((o) => o.technicalName),
          [`${p}a`, `${p}b`],
        );
        assert.equal((await store.organizations.list({ filters: { technicalName: p }, limit: 0 })).length, 3);
      });

      test('listed organizations carry their attributes', async () => {
        const p = unique('full-');
        const org = await stored({ technicalName: `${p}o`, attributes: { x: ['2', '1'] } });
        assert.deepEqual(await store.organizations.list({ filters: { technicalName: p } }), [org]);
      });
    });
  });
}
