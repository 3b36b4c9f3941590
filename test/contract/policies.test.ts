import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parsePolicyDocument, type Policy } from '../../src/domain/policy.ts';
import { ConflictError, MissingReferenceError, PolicyInUseError, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aClient, aGroup, anOrganization, aStoredUser, aToken, T0, unique, warmUp, openTestStore, type TestStore } from '../helpers/store.ts';

function aPolicy(name = unique('policy-'), claims: unknown[] = [{ claim: 'tenant', value: 'acme' }]): Policy {
  return { document: parsePolicyDocument({ name, access: { groups: ['Staff'] }, claims }), version: 1, createdAt: T0, updatedAt: T0 };
}

for (const kind of DATABASES) {
  describe(`policy store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    before(async () => {
      harness = await openTestStore(kind);
      store = harness.store;
    });
    after(async () => harness.close());

    test('a policy round-trips; names are unique; list is by name', async () => {
      const policy = aPolicy();
      await store.policies.insert(policy);
      assert.deepEqual(await store.policies.get(policy.document.name), policy);
      await assert.rejects(store.policies.insert(aPolicy(policy.document.name)), ConflictError);
      assert.equal(await store.policies.get(unique('none-')), undefined);
      const names = (await store.policies.list()).map((p) => p.document.name);
      assert.deepEqual(names, [...names].sort());
      assert.ok(names.includes(policy.document.name));
    });

    test('update replaces the document and raises the version; an unknown name changes nothing', async () => {
      const policy = aPolicy();
      await store.policies.insert(policy);
      const changed = parsePolicyDocument({ name: policy.document.name, claims: [{ claim: 'tenant', value: 'other' }] });
      assert.deepEqual(await store.policies.update(changed, T0 + 5), { document: changed, version: 2, createdAt: T0, updatedAt: T0 + 5 });
      assert.deepEqual(await store.policies.get(policy.document.name), { document: changed, version: 2, createdAt: T0, updatedAt: T0 + 5 });
      assert.equal(await store.policies.update(parsePolicyDocument({ name: unique('none-') }), T0), undefined);
    });

    test('a client refers to a policy: unknown names are refused, a policy in use is not deleted', async () => {
      const policy = aPolicy();
      await store.policies.insert(policy);
      await assert.rejects(store.clients.insert(aClient({ authorizationPolicy: unique('none-') })), MissingReferenceError);
      const client = aClient({ authorizationPolicy: policy.document.name });
      await store.clients.insert(client);
      assert.equal((await store.clients.get(client.clientId))?.authorizationPolicy, policy.document.name);
      assert.deepEqual(await store.policies.clientsUsing(policy.document.name), [client.clientId]);
      await assert.rejects(store.policies.delete(policy.document.name), PolicyInUseError);
      assert.ok(await store.policies.get(policy.document.name));
      await assert.rejects(store.clients.update({ ...client, authorizationPolicy: unique('none-') }), MissingReferenceError);
      assert.equal(await store.clients.update({ ...client, authorizationPolicy: undefined }), true);
      assert.equal(await store.policies.delete(policy.document.name), true);
      assert.equal(await store.policies.delete(policy.document.name), false);
    });

    test("subject reads the policy row and the user's attributes, groups and organization chain in one statement", async () => {
      const policy = aPolicy();
      await store.policies.insert(policy);
      const root = anOrganization();
      const middle = anOrganization({ parentId: root.id });
      const leaf = anOrganization({ parentId: middle.id });
      for (const o of [root, middle, leaf]) await store.organizations.insert(o);
      const user = await aStoredUser(store, { organizationId: leaf.id, attributes: { department: ['Sales', 'Legal'], level: ['3'] } });
      const [g1, g2] = [aGroup({ name: unique('B-') }), aGroup({ name: unique('A-') })];
      for (const g of [g1, g2]) {
        await store.groups.insert(g);
        await store.groups.addMember(g.id, user.id);
      }
      const own = { id: leaf.id, technicalName: leaf.technicalName, friendlyName: leaf.friendlyName };
      const flat = await store.policies.subject(policy.document.name, user.id);
      assert.deepEqual(flat.organizations, [own]);
      const subject = await store.policies.subject(policy.document.name, user.id, { ancestors: true });
      assert.deepEqual({ ...flat, organizations: subject.organizations }, subject);
      assert.deepEqual(subject, {
        policy: { version: 1, document: JSON.stringify({ name: policy.document.name, access: { groups: ['Staff'] }, claims: [{ claim: 'tenant', value: 'acme' }] }) },
        attributes: { department: ['Sales', 'Legal'], level: ['3'] },
        groups: [g2.name, g1.name],
        organizations: [leaf, middle, root].map((o) => ({ id: o.id, technicalName: o.technicalName, friendlyName: o.friendlyName })),
      });
      const loner = await aStoredUser(store);
      assert.deepEqual(await store.policies.subject(unique('none-'), loner.id, { ancestors: true }), { policy: undefined, attributes: {}, groups: [], organizations: [] });
      assert.deepEqual(await store.policies.subject(unique('none-'), loner.id), { policy: undefined, attributes: {}, groups: [], organizations: [] });
    });

    test("findWithUser reads the token's client's policy and the user's facts as subject does; for a client without a policy, none", async () => {
      const policy = aPolicy();
      await store.policies.insert(policy);
      const parent = anOrganization();
      const own = anOrganization({ parentId: parent.id });
      for (const o of [parent, own]) await store.organizations.insert(o);
      // Attribute names that are Object.prototype's members stay plain attributes.
      const user = await aStoredUser(store, { organizationId: own.id, attributes: { department: ['Sales', 'Legal', 'Ops'], toString: ['x'], ['__proto__']: ['y'], level: ['3'] } });
      const [g1, g2] = [aGroup({ name: unique('B-') }), aGroup({ name: unique('A-') })];
      for (const g of [g1, g2]) {
        await store.groups.insert(g);
        await store.groups.addMember(g.id, user.id);
      }
      const client = aClient({ authorizationPolicy: policy.document.name });
      const bare = aClient();
      for (const c of [client, bare]) await store.clients.insert(c);
      const token = aToken({ clientId: client.clientId, userId: user.id });
      const other = aToken({ clientId: bare.clientId, userId: user.id });
      for (const t of [token, other]) await store.tokens.insert(t);

      const found = await store.tokens.findWithUser(token.tokenHash);
      const subject = await store.policies.subject(policy.document.name, user.id);
      assert.deepEqual(found?.clientPolicySubject, subject);
      assert.deepEqual(subject, {
        policy: { version: 1, document: JSON.stringify({ name: policy.document.name, access: { groups: ['Staff'] }, claims: [{ claim: 'tenant', value: 'acme' }] }) },
        attributes: { department: ['Sales', 'Legal', 'Ops'], toString: ['x'], ['__proto__']: ['y'], level: ['3'] },
        groups: [g2.name, g1.name],
        organizations: [{ id: own.id, technicalName: own.technicalName, friendlyName: own.friendlyName }],
      });
      assert.equal((await store.tokens.findWithUser(other.tokenHash))?.clientPolicySubject, undefined);
      // A user without attributes, groups or organization: empty facts, not missing ones.
      const loner = await aStoredUser(store);
      const lonely = aToken({ clientId: client.clientId, userId: loner.id });
      await store.tokens.insert(lonely);
      assert.deepEqual((await store.tokens.findWithUser(lonely.tokenHash))?.clientPolicySubject, { policy: subject.policy, attributes: {}, groups: [], organizations: [] });
      // Read at each lookup: a new version of the policy shows at the next one.
      await store.policies.update(parsePolicyDocument({ name: policy.document.name }), T0 + 1);
      assert.equal((await store.tokens.findWithUser(token.tokenHash))?.clientPolicySubject?.policy?.version, 2);
    });

    test('concurrent updates each get their own version, and the stored document is one of them whole', async () => {
      const policy = aPolicy();
      await store.policies.insert(policy);
      const [one, two] = kind.name === 'postgres' ? [await harness.open(), await harness.open()] : [store, store];
      await Promise.all([warmUp(one, 4), warmUp(two, 4)]);
      const documents = Array.from({ length: 10 }, (_, i) => parsePolicyDocument({ name: policy.document.name, claims: [{ claim: 'n', value: String(i) }] }));
      const results = await Promise.all(documents.map((d, i) => (i % 2 ? one : two).policies.update(d, T0 + i)));
      assert.deepEqual(results.map((r) => r!.version).sort((a, b) => a - b), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const stored = (await store.policies.get(policy.document.name))!;
      assert.equal(stored.version, 11);
      assert.deepEqual(stored.document, results.find((r) => r!.version === 11)!.document);
    });

    test('a delete racing a client being attached: exactly one wins, and no client refers to a deleted policy', async () => {
      const [one, two] = kind.name === 'postgres' ? [await harness.open(), await harness.open()] : [store, store];
      await Promise.all([warmUp(one, 4), warmUp(two, 4)]);
      for (let round = 0; round < 10; round++) {
        const policy = aPolicy();
        await store.policies.insert(policy);
        const client = aClient({ authorizationPolicy: policy.document.name });
        const [attached, deleted] = await Promise.allSettled([one.clients.insert(client), two.policies.delete(policy.document.name)]);
        const stored = await store.clients.get(client.clientId);
        const policyLeft = await store.policies.get(policy.document.name);
        if (attached.status === 'fulfilled') {
          assert.equal(deleted.status, 'rejected');
          assert.ok((deleted as PromiseRejectedResult).reason instanceof PolicyInUseError);
          assert.ok(policyLeft);
          assert.equal(stored?.authorizationPolicy, policy.document.name);
        } else {
          assert.ok(attached.reason instanceof MissingReferenceError, String(attached.reason));
          assert.deepEqual(deleted, { status: 'fulfilled', value: true });
          assert.equal(stored, undefined);
          assert.equal(policyLeft, undefined);
        }
      }
    });
  });
}
