/**
 * The policy use cases (src/manage/policies.ts) on every database: each change emits its audit
 * event naming who acted (the CLI and the management API emitted them each on their own before
 * issue 23); a policy in use is refused naming the clients that use it now, and emits nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PolicyInUseError } from '../../src/domain/errors.ts';
import { PolicyInUse } from '../../src/manage/policies.ts';
import { actingAs, eventsOf, onEveryDatabase } from '../helpers/administration.ts';
import { aClient, unique } from '../helpers/store.ts';

const MANAGE_API = { via: 'manage-api', caller: 'admin-1', clientId: 'gatehouse-console' } as const;

onEveryDatabase('policy use cases', (suite) => {
  test('create, update and delete each emit their event with the version and the actor', async () => {
    const { admin, audit } = suite();
    audit.clear();
    const acting = actingAs(MANAGE_API);
    const name = unique('policy-');
    await admin.policies.create(acting, { name, access: { groups: ['Staff'] } });
    const updated = await admin.policies.update(acting, name, { access: { groups: ['Other'] } });
    assert.equal(updated.version, 2);
    await admin.policies.delete(acting, name);
    assert.deepEqual(
      eventsOf(audit, 'policy.', ['policy', 'version']),
      [
        { event: 'policy.created', policy: name, version: 1, actor: MANAGE_API },
        { event: 'policy.updated', policy: name, version: 2, actor: MANAGE_API },
        { event: 'policy.deleted', policy: name, actor: MANAGE_API },
      ],
    );
  });

  test('a policy in use is refused with the clients that use it (still the store’s PolicyInUseError); nothing is emitted', async () => {
    const { admin, audit, store } = suite();
    const acting = actingAs();
    const name = unique('policy-');
    await admin.policies.create(acting, { name });
    const [first, second] = [aClient({ authorizationPolicy: name }), aClient({ authorizationPolicy: name })];
    await store.clients.insert(first);
    await store.clients.insert(second);
    audit.clear();
    const refusal = await admin.policies.delete(acting, name).then(
      () => assert.fail('deleted a policy in use'),
      (error: unknown) => error,
    );
    assert.ok(refusal instanceof PolicyInUse && refusal instanceof PolicyInUseError, String(refusal));
    assert.deepEqual([...refusal.clients].sort(), [first.clientId, second.clientId].sort());
    assert.deepEqual(audit.all(), []);
    assert.deepEqual((await admin.policies.get(name)).clients.sort(), [first.clientId, second.clientId].sort());
  });
});
