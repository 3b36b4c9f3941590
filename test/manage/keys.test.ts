/**
 * The signing-key use cases (src/manage/keys.ts) on every database: a rotation emits `key.rotated`
 * naming who acted, and each listed key's status is the key ring's decision of which key signs
 * (the rule the management API held in its route before issue 23): a rotated-in key is `next`
 * until its activation delay is over, then `active`, and the key it replaced `retired`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ACTIVATION_DELAY_MS, actingAs, onEveryDatabase } from '../helpers/administration.ts';

onEveryDatabase('signing-key use cases', (suite) => {
  test('rotate: the new key is next until its activation delay is over, then active and the old one retired; key.rotated names the actor', async () => {
    const { admin, audit, clock } = suite();
    const acting = actingAs();
    const first = await admin.keys.rotate(acting, 'ES256');
    // The first key of an algorithm signs at once: there is no other.
    assert.deepEqual((await admin.keys.list()).map((k) => [k.key.kid, k.status]), [[first.key.kid, 'active']]);
    clock.advance(ACTIVATION_DELAY_MS);
    const second = await admin.keys.rotate(acting, 'ES256');
    assert.equal(second.status, 'next');
    assert.equal(second.signsFrom, clock.now() + ACTIVATION_DELAY_MS);
    const statuses = async () => new Map((await admin.keys.list()).map((k) => [k.key.kid, k.status]));
    assert.deepEqual(await statuses(), new Map([[first.key.kid, 'active'], [second.key.kid, 'next']]));
    clock.advance(ACTIVATION_DELAY_MS);
    assert.deepEqual(await statuses(), new Map([[first.key.kid, 'retired'], [second.key.kid, 'active']]));
    assert.deepEqual(
      audit.of('key.rotated').map(({ kid, alg, actor }) => [kid, alg, actor]),
      [first, second].map(({ key }) => [key.kid, 'ES256', { via: 'cli', caller: 'alice' }]),
    );
  });

  test('seal without a key-encryption key is refused by the key ring, and emits nothing', async () => {
    const { admin, audit } = suite();
    audit.clear();
    await assert.rejects(admin.keys.seal(), /GATEHOUSE_KEY_ENCRYPTION_KEY/);
    assert.deepEqual(audit.all(), []);
  });
});
