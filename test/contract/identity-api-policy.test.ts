/**
 * Seeding the identity API's authorization policy (src/oauth/policy/identity-api.ts; issue 13,
 * item 5): the policy created once, attached to the API client only where it has none, in one unit
 * of work that several instances starting at once may all run (docs/decisions.md PO12–PO13).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { IDENTITY_API_POLICY, seedIdentityApiPolicy } from '../../src/oauth/policy/identity-api.ts';
import { MissingReferenceError, type PolicyStore, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aClient, T0, unique, warmUp, withTestStore } from '../helpers/store.ts';

const GROUP = 'Identity API Users';
const seeded = parsePolicyDocument({ name: IDENTITY_API_POLICY, access: { groups: [GROUP] } });

for (const kind of DATABASES) {
  describe(`identity API policy seeding on ${kind.name}`, () => {
    test('attachPolicyIfNone writes only where the client has no policy (PO-18)', async () => {
      await withTestStore(kind, async (store) => {
        const other = parsePolicyDocument({ name: unique('own-'), access: { groups: ['Admins'] } });
        await store.policies.insert({ document: seeded, version: 1, createdAt: T0, updatedAt: T0 });
        await store.policies.insert({ document: other, version: 1, createdAt: T0, updatedAt: T0 });
        const bare = aClient();
        const own = aClient({ authorizationPolicy: other.name });
        await store.clients.insert(bare);
        await store.clients.insert(own);
        assert.equal(await store.clients.attachPolicyIfNone(bare.clientId, IDENTITY_API_POLICY, T0 + 1), true);
        assert.equal((await store.clients.get(bare.clientId))!.authorizationPolicy, IDENTITY_API_POLICY);
        assert.equal((await store.clients.get(bare.clientId))!.updatedAt, T0 + 1);
        assert.equal(await store.clients.attachPolicyIfNone(own.clientId, IDENTITY_API_POLICY, T0 + 1), false);
        assert.deepEqual(await store.clients.get(own.clientId), own);
        assert.equal(await store.clients.attachPolicyIfNone(unique('none-'), IDENTITY_API_POLICY, T0 + 1), false);
        const third = aClient();
        await store.clients.insert(third);
        await assert.rejects(store.clients.attachPolicyIfNone(third.clientId, unique('none-'), T0 + 1), MissingReferenceError);
        assert.equal((await store.clients.get(third.clientId))!.authorizationPolicy, undefined);
      });
    });

    test('seeding creates the policy and attaches it once; run again it changes nothing, and never overwrites a policy (PO-18)', async () => {
      await withTestStore(kind, async (store) => {
        const clock = new ManualClock(T0);
        const api = aClient();
        await store.clients.insert(api);
        assert.deepEqual(await seedIdentityApiPolicy({ store, clock }, { apiClientId: api.clientId, apiGroup: GROUP }), { created: true, attached: true });
        assert.deepEqual(await store.policies.get(IDENTITY_API_POLICY), { document: seeded, version: 1, createdAt: T0, updatedAt: T0 });
        assert.equal((await store.clients.get(api.clientId))!.authorizationPolicy, IDENTITY_API_POLICY);
        // An administrator's change to the policy survives every later start, even with another group configured.
        const changed = parsePolicyDocument({ name: IDENTITY_API_POLICY, access: { groups: ['Admins'] } });
        await store.policies.update(changed, T0 + 1);
        clock.advance(5000);
        assert.deepEqual(await seedIdentityApiPolicy({ store, clock }, { apiClientId: api.clientId, apiGroup: 'Other' }), { created: false, attached: false });
        assert.deepEqual(await store.policies.get(IDENTITY_API_POLICY), { document: changed, version: 2, createdAt: T0, updatedAt: T0 + 1 });
        // An API client with a policy of its own keeps it.
        const own = parsePolicyDocument({ name: unique('own-'), access: { groups: ['Admins'] } });
        await store.policies.insert({ document: own, version: 1, createdAt: T0, updatedAt: T0 });
        const other = aClient({ authorizationPolicy: own.name });
        await store.clients.insert(other);
        assert.deepEqual(await seedIdentityApiPolicy({ store, clock }, { apiClientId: other.clientId, apiGroup: GROUP }), { created: false, attached: false });
        assert.deepEqual(await store.clients.get(other.clientId), other);
        // No API client registered yet: the policy alone (the bearer check falls back to it by name).
        assert.deepEqual(await seedIdentityApiPolicy({ store, clock }, { apiClientId: unique('later-'), apiGroup: GROUP }), { created: false, attached: false });
      });
    });

    test('an insert that loses the race to another instance (ConflictError) is taken as "already there", and the unit runs again (PO-18)', async () => {
      await withTestStore(kind, async (store) => {
        const api = aClient();
        await store.clients.insert(api);
        // Another instance's policy, committed between this unit's read and its insert: the read is
        // made to miss it once, so the insert meets the unique name as it would in that race.
        const theirs = parsePolicyDocument({ name: IDENTITY_API_POLICY, access: { groups: ['Theirs'] } });
        await store.policies.insert({ document: theirs, version: 1, createdAt: T0, updatedAt: T0 });
        let misses = 1;
        const racing: Pick<Store, 'transaction'> = {
          transaction: (work) =>
            store.transaction((tx) => {
              const policies: PolicyStore = {
                get: async (name) => (misses-- > 0 ? undefined : tx.policies.get(name)),
                insert: (policy) => tx.policies.insert(policy),
                list: () => tx.policies.list(),
                update: (document, now) => tx.policies.update(document, now),
                delete: (name) => tx.policies.delete(name),
                clientsUsing: (name) => tx.policies.clientsUsing(name),
                subject: (name, userId, options) => tx.policies.subject(name, userId, options),
                page: (query) => tx.policies.page(query),
              };
              return work({ ...tx, policies });
            }),
        };
        assert.deepEqual(await seedIdentityApiPolicy({ store: racing, clock: new ManualClock(T0 + 1) }, { apiClientId: api.clientId, apiGroup: GROUP }), { created: false, attached: true });
        assert.deepEqual(await store.policies.get(IDENTITY_API_POLICY), { document: theirs, version: 1, createdAt: T0, updatedAt: T0 });
        assert.equal((await store.clients.get(api.clientId))!.authorizationPolicy, IDENTITY_API_POLICY);
      });
    });

    test('several instances seeding at once: one creates the policy, none fails, the client is attached once (PO-18)', async () => {
      await withTestStore(kind, async (store, harness) => {
        const instances = kind.name === 'postgres' ? await Promise.all(Array.from({ length: 4 }, () => harness.open())) : [store, store, store, store];
        await Promise.all(instances.map((instance) => warmUp(instance, 2)));
        const api = aClient();
        await store.clients.insert(api);
        const clock = new ManualClock(T0);
        const outcomes = await Promise.all(instances.flatMap((instance) => [instance, instance]).map((instance) => seedIdentityApiPolicy({ store: instance, clock }, { apiClientId: api.clientId, apiGroup: GROUP })));
        assert.equal(outcomes.filter((o) => o.created).length, 1, JSON.stringify(outcomes));
        assert.equal(outcomes.filter((o) => o.attached).length, 1, JSON.stringify(outcomes));
        assert.deepEqual(await store.policies.get(IDENTITY_API_POLICY), { document: seeded, version: 1, createdAt: T0, updatedAt: T0 });
        assert.equal((await store.clients.get(api.clientId))!.authorizationPolicy, IDENTITY_API_POLICY);
      });
    });
  });
}
