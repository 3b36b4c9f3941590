import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { MAX_ORGANIZATION_DEPTH, type Organization } from '../../src/domain/organization.ts';
import { deleteOrganization, updateOrganization } from '../../src/identity/organization-changes.ts';
import { createOrganization } from '../../src/identity/organizations.ts';
import { createUser } from '../../src/identity/users.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { IdentityError } from '../../src/identity/errors.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { ConflictError, MissingReferenceError, OrganizationInUseError, TreeShapeError, type Store } from '../../src/storage/ports.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES } from '../helpers/databases.ts';
import { anOrganization, aUser, openTestStore, T0, unique, warmUp, withTestStore, type TestStore } from '../helpers/store.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const ids = (orgs: Organization[]) => orgs.map((o) => o.id);
const sorted = (values: string[]) => [...values].sort();

for (const kind of DATABASES) {
  describe(`organization store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: SqlStore;
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

    test('deleting an organization that has users is an OrganizationInUseError and deletes nothing', async () => {
      const org = await stored();
      const user = aUser({ organizationId: org.id });
      await store.users.insert(user, undefined);
      await assert.rejects(store.organizations.delete(org.id), OrganizationInUseError);
      assert.deepEqual(await store.organizations.get(org.id), org);
      assert.equal((await store.users.get(user.id))?.organizationId, org.id);
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

    describe('the tree never gets a cycle and stays within MAX_ORGANIZATION_DEPTH (security test finding 4)', () => {
      const isShape = (reason: 'cycle' | 'too_deep') => (error: unknown) => error instanceof TreeShapeError && error.reason === reason;

      /** A chain of `levels` organizations, root first. */
      async function chain(levels: number): Promise<Organization[]> {
        const orgs: Organization[] = [];
        for (let i = 0; i < levels; i++) orgs.push(await stored({ parentId: orgs.at(-1)?.id }));
        return orgs;
      }

      test('update refuses a move under itself or its own subtree, and changes nothing', async () => {
        const [a, b, c] = await chain(3);
        await assert.rejects(store.organizations.update({ ...a!, parentId: c!.id, technicalName: unique('renamed-') }), isShape('cycle'));
        await assert.rejects(store.organizations.update({ ...a!, parentId: b!.id }), isShape('cycle'));
        await assert.rejects(store.organizations.update({ ...b!, parentId: b!.id }), isShape('cycle'));
        assert.deepEqual(await store.organizations.get(a!.id), a);
        assert.deepEqual(await store.organizations.get(b!.id), b);
        // Insert refuses an organization that is its own parent (only a caller choosing ids could ask).
        const own = randomUUID();
        await assert.rejects(store.organizations.insert(anOrganization({ id: own, parentId: own })), (error) => isShape('cycle')(error) || error instanceof MissingReferenceError);
        assert.equal(await store.organizations.get(own), undefined);
        // Unchanged parent, other changes: fine; and a move elsewhere is fine.
        assert.equal(await store.organizations.update({ ...c!, friendlyName: 'still here' }), true);
        assert.equal(await store.organizations.update({ ...c!, parentId: a!.id }), true);
        assert.equal(await store.organizations.update({ ...b!, parentId: undefined }), true);
      });

      test(`no insert or move makes a tree deeper than ${MAX_ORGANIZATION_DEPTH} levels`, async () => {
        const deep = await chain(MAX_ORGANIZATION_DEPTH);
        const bottom = deep.at(-1)!;
        await assert.rejects(store.organizations.insert(anOrganization({ parentId: bottom.id })), isShape('too_deep'));
        // A two-level subtree fits under level 62 and not under level 63.
        const [top, below] = await chain(2);
        await assert.rejects(store.organizations.update({ ...top!, parentId: deep[MAX_ORGANIZATION_DEPTH - 2]!.id }), isShape('too_deep'));
        assert.deepEqual(await store.organizations.get(top!.id), top);
        assert.equal(await store.organizations.update({ ...top!, parentId: deep[MAX_ORGANIZATION_DEPTH - 3]!.id }), true);
        const all = await store.organizations.subtreeIds(deep[0]!.id);
        assert.equal(all.length, MAX_ORGANIZATION_DEPTH + 2);
        assert.ok(all.includes(below!.id));
      });

      test('a cycle written straight into the table does not hang subtreeIds or a move: both fail at once', { timeout: 20_000 }, async () => {
        const [a, b] = await chain(2);
        const c = await stored({ parentId: b!.id });
        const outside = await stored();
        // What a version before this rule could commit: a under b, b under a.
        await sql`update organizations set parent_id = ${b!.id} where id = ${a!.id}`.execute(store.database.db);
        const started = Date.now();
        await assert.rejects(store.organizations.subtreeIds(a!.id), isShape('too_deep'));
        await assert.rejects(store.organizations.subtreeIds(c!.id).then(() => store.organizations.subtreeIds(b!.id)), isShape('too_deep'));
        await assert.rejects(store.organizations.update({ ...outside, parentId: c!.id }), isShape('too_deep'));
        await assert.rejects(store.organizations.insert(anOrganization({ parentId: c!.id })), isShape('too_deep'));
        assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
        // Repair it, as an operator would, so the rows do not trouble other tests.
        await sql`update organizations set parent_id = null where id = ${a!.id}`.execute(store.database.db);
        assert.deepEqual(sorted(await store.organizations.subtreeIds(a!.id)), sorted(ids([a!, b!, c])));
      });

      test('two opposite moves from two instances at once (A under B, B under A): exactly one commits, never a cycle', { timeout: 120_000 }, async () => {
        const TRIALS = 50;
        // PostgreSQL: two instances, each with its own pool. SQLite: one store, whose single
        // connection runs one transaction at a time (as BEGIN IMMEDIATE makes processes do); two
        // in one process would block each other's thread while waiting for the file lock.
        const [one, two] = kind.name === 'postgres' ? [await harness.open(), await harness.open()] : [store, store];
        await Promise.all([warmUp(one, 4), warmUp(two, 4)]);
        const deps = (s: Store) => ({ organizations: s.organizations, users: s.users, transaction: s.transaction, clock: new ManualClock(T0) });
        let cycles = 0;
        for (let trial = 0; trial < TRIALS; trial++) {
          const [a, b] = [await stored(), await stored()];
          const outcomes = await Promise.allSettled([
            updateOrganization(deps(one), a.id, { parentId: b.id }),
            updateOrganization(deps(two), b.id, { parentId: a.id }),
          ]);
          const [storedA, storedB] = [await store.organizations.get(a.id), await store.organizations.get(b.id)];
          if (storedA?.parentId === b.id && storedB?.parentId === a.id) cycles++;
          else {
            assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, `trial ${trial}: exactly one move commits`);
            const refused = outcomes.find((o) => o.status === 'rejected')!.reason as unknown;
            assert.ok(refused instanceof IdentityError && refused.code === 'invalid_argument' && refused.field === 'parentId', String(refused));
          }
          // Untangle a cycle so that later trials (and the report) can go on.
          await sql`update organizations set parent_id = null where id in (${a.id}, ${b.id})`.execute(store.database.db);
        }
        assert.equal(cycles, 0, `${cycles} of ${TRIALS} trials committed a cycle`);
      });
    });

    test('creating under a parent while the parent is deleted from another instance: one of them fails, nothing dangles', { timeout: 120_000 }, async () => {
      const TRIALS = 30;
      const [one, two] = kind.name === 'postgres' ? [await harness.open(), await harness.open()] : [store, store];
      await Promise.all([warmUp(one, 4), warmUp(two, 4)]);
      const outcomes = new Map<string, number>();
      for (let trial = 0; trial < TRIALS; trial++) {
        const parent = await stored();
        const [created, deleted] = await Promise.allSettled([
          createOrganization({ organizations: one.organizations, clock: new ManualClock(T0), random: cryptoRandom }, { parentId: parent.id }),
          deleteOrganization({ organizations: two.organizations, users: two.users }, parent.id),
        ]);
        const parentLeft = await store.organizations.get(parent.id);
        if (created.status === 'fulfilled') {
          // The child exists under a parent that exists: the delete was refused (409 in_use).
          assert.deepEqual(await store.organizations.get(created.value.id), created.value);
          assert.ok(parentLeft, `trial ${trial}: a child under a deleted parent`);
          assert.ok(deleted.status === 'rejected' && deleted.reason instanceof IdentityError && deleted.reason.code === 'in_use', String(deleted.status === 'rejected' ? deleted.reason : 'deleted'));
        } else {
          assert.ok(created.reason instanceof IdentityError && created.reason.code === 'invalid_reference', String(created.reason));
          assert.equal(deleted.status, 'fulfilled');
          assert.equal(parentLeft, undefined);
        }
        const key = created.status === 'fulfilled' ? 'created' : 'deleted';
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
      assert.equal([...outcomes.values()].reduce((a, b) => a + b, 0), TRIALS);
    });

    test('adding a user to an organization while another instance deletes it: one of them fails, the user never silently loses the organization', { timeout: 120_000 }, async () => {
      const TRIALS = 30;
      const [one, two] = kind.name === 'postgres' ? [await harness.open(), await harness.open()] : [store, store];
      await Promise.all([warmUp(one, 4), warmUp(two, 4)]);
      let orphaned = 0;
      for (let trial = 0; trial < TRIALS; trial++) {
        const organization = await stored();
        const [created, deleted] = await Promise.allSettled([
          createUser({ users: one.users, organizations: one.organizations, groups: one.groups, transaction: one.transaction, clock: new ManualClock(T0), random: cryptoRandom }, { username: unique('member-'), organizationId: organization.id }, AS_OPERATOR),
          deleteOrganization({ organizations: two.organizations, users: two.users }, organization.id),
        ]);
        if (created.status === 'fulfilled') {
          const user = await store.users.get(created.value.id);
          if (user?.organizationId === undefined) orphaned++;
          else {
            assert.ok(await store.organizations.get(organization.id), `trial ${trial}: the organization was deleted under its user`);
            assert.ok(deleted.status === 'rejected' && deleted.reason instanceof IdentityError && deleted.reason.code === 'in_use', String(deleted.status === 'rejected' ? deleted.reason : 'deleted'));
          }
        } else {
          assert.ok(created.reason instanceof IdentityError && created.reason.code === 'invalid_reference', String(created.reason));
          assert.equal(deleted.status, 'fulfilled');
        }
      }
      assert.equal(orphaned, 0, `${orphaned} of ${TRIALS} trials left a user whose organization was deleted under it`);
    });

    test('adding a user to an organization while another instance makes it virtual: never a user in a virtual organization', { timeout: 120_000 }, async () => {
      const TRIALS = 30;
      const [one, two] = [store, await harness.open()];
      await Promise.all([warmUp(one, 4), warmUp(two, 4)]);
      const broken: string[] = [];
      for (let trial = 0; trial < TRIALS; trial++) {
        const organization = await stored();
        await Promise.allSettled([
          createUser({ users: one.users, organizations: one.organizations, groups: one.groups, transaction: one.transaction, clock: new ManualClock(T0), random: cryptoRandom }, { username: unique('member-'), organizationId: organization.id }, AS_OPERATOR),
          updateOrganization({ organizations: two.organizations, users: two.users, transaction: two.transaction, clock: new ManualClock(T0) }, organization.id, { virtual: true }),
        ]);
        const virtual = (await store.organizations.get(organization.id))?.virtual;
        const members = await store.users.listIds({ organizationIds: [organization.id] });
        if (virtual && members.length > 0) broken.push(`trial ${trial}`);
      }
      assert.deepEqual(broken, [], 'a virtual organization holds no users');
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

      test('listIds reads the organizations table alone, even with the attribute table gone (security test finding 10)', async () => {
        await withTestStore(kind, async (own) => {
          const p = unique('bare-');
          const made: Organization[] = [];
          for (const n of ['b', 'a']) {
            const org = anOrganization({ technicalName: `${p}${n}`, attributes: { notes: Array.from({ length: 100 }, (_, i) => String(i).padEnd(255, 'x')) } });
            await own.organizations.insert(org);
            made.unshift(org);
          }
          await sql`alter table organization_attributes rename to organization_attributes_elsewhere`.execute(own.database.db);
          assert.deepEqual(await own.organizations.listIds({ filters: { technicalName: p } }), ids(made));
          assert.deepEqual(await own.organizations.listIds({ filters: { technicalName: p }, limit: 1 }), ids(made.slice(0, 1)));
        });
      });

      test('listed organizations carry their attributes', async () => {
        const p = unique('full-');
        const org = await stored({ technicalName: `${p}o`, attributes: { x: ['2', '1'] } });
        assert.deepEqual(await store.organizations.list({ filters: { technicalName: p } }), [org]);
      });
    });
  });
}
