/**
 * The organization use cases (src/manage/organizations.ts) on every database: each change emits
 * its one audit event, naming who acted, whichever front end asked (before issue 23 only the
 * management API emitted them: the CLI's and the identity API's changes went unaudited); a
 * refused change emits none.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IdentityError } from '../../src/identity/errors.ts';
import { actingAs, eventsOf, onEveryDatabase } from '../helpers/administration.ts';
import { unique } from '../helpers/store.ts';

const IDENTITY_API = { via: 'identity-api', method: 'bearer', caller: 'user-1', clientId: 'app' } as const;

onEveryDatabase('organization use cases', (suite) => {
  test('create, update and delete each emit their event with the actor; update names the fields given, nulls included', async () => {
    const { admin, audit, store } = suite();
    audit.clear();
    const acting = actingAs(IDENTITY_API);
    const parent = await admin.organizations.create(acting, { technicalName: unique('parent-') });
    const child = await admin.organizations.create(acting, { technicalName: unique('child-'), parentId: parent.id });
    await admin.organizations.update(acting, child.id, { attributes: { vat: ['1'] }, parentId: null, friendlyName: 'Child Oy', type: undefined });
    await admin.organizations.delete(acting, child.id);
    assert.deepEqual(
      eventsOf(audit, 'organization.', ['organizationId', 'technicalName', 'fields']),
      [
        { event: 'organization.created', organizationId: parent.id, technicalName: parent.technicalName, fields: undefined, actor: IDENTITY_API },
        { event: 'organization.created', organizationId: child.id, technicalName: child.technicalName, fields: undefined, actor: IDENTITY_API },
        // The management API's order of fields, whatever order the front end built the changes in.
        { event: 'organization.updated', organizationId: child.id, technicalName: child.technicalName, fields: ['friendlyName', 'parentId', 'attributes'], actor: IDENTITY_API },
        { event: 'organization.deleted', organizationId: child.id, technicalName: child.technicalName, fields: undefined, actor: IDENTITY_API },
      ].map((e) => JSON.parse(JSON.stringify(e)) as object),
    );
    assert.equal(await store.organizations.get(child.id), undefined);
  });

  test('a refused change emits nothing: a cycle, deleting an organization that holds another, an unknown id', async () => {
    const { admin, audit } = suite();
    const acting = actingAs();
    const parent = await admin.organizations.create(acting, { technicalName: unique('parent-') });
    const child = await admin.organizations.create(acting, { technicalName: unique('child-'), parentId: parent.id });
    audit.clear();
    await assert.rejects(admin.organizations.update(acting, parent.id, { parentId: child.id }), (e: unknown) => e instanceof IdentityError && e.code === 'invalid_argument' && e.field === 'parentId');
    await assert.rejects(admin.organizations.delete(acting, parent.id), (e: unknown) => e instanceof IdentityError && e.code === 'in_use');
    await assert.rejects(admin.organizations.update(acting, crypto.randomUUID(), { friendlyName: 'x' }), (e: unknown) => e instanceof IdentityError && e.code === 'not_found');
    assert.deepEqual(audit.all(), []);
    assert.equal((await admin.organizations.get(parent.id)).parentId, undefined);
  });

  test('a new organization\'s custom attributes are checked whichever front end asks: a bad name is refused naming it, blank values are dropped', async () => {
    const { admin, audit } = suite();
    audit.clear();
    const technicalName = unique('attributed-');
    await assert.rejects(
      admin.organizations.create(actingAs(), { technicalName, attributes: { '1st': ['x'] } }),
      (e: unknown) => e instanceof IdentityError && e.code === 'invalid_argument' && e.field === '1st',
    );
    assert.deepEqual(await admin.organizations.listIds({ filters: { technicalName }, exactMatch: true }), []);
    assert.deepEqual(audit.all(), []);
    const created = await admin.organizations.create(actingAs(), { technicalName, attributes: { note: [' '], vat: [' FI1 '] } });
    assert.deepEqual(created.attributes, { vat: ['FI1'] });
  });

  test('the reads: the path of technical names, the users of a subtree, a page and the ids', async () => {
    const { admin } = suite();
    const acting = actingAs();
    const root = await admin.organizations.create(acting, { technicalName: unique('root-') });
    const leaf = await admin.organizations.create(acting, { technicalName: unique('leaf-'), parentId: root.id });
    assert.equal(await admin.organizations.path(leaf), `${root.technicalName}/${leaf.technicalName}`);
    assert.deepEqual(await admin.organizations.userIds(root.id, { recursive: true }), []);
    assert.deepEqual(await admin.organizations.listIds({ filters: { technicalName: leaf.technicalName }, exactMatch: true }), [leaf.id]);
    assert.deepEqual((await admin.organizations.page({ limit: 10, q: root.technicalName })).map((o) => o.id), [root.id]);
  });
});
