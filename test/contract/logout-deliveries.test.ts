/**
 * The last back-channel logout delivery per client (LogoutDeliveryStore, migration 037; decisions
 * LO13) on every database: one row per client; a later attempt replaces it, an earlier one recorded
 * late (another instance, a slow store) does not — one conditional upsert, also when two instances
 * record at once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LogoutDelivery } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { T0, twoInstances, unique } from '../helpers/store.ts';

const RACERS = 20;

for (const kind of DATABASES) {
  describe(`logout deliveries store on ${kind.name}`, () => {
    const instances = twoInstances(kind, RACERS);

    const attempt = (clientId: string, at: number, status: LogoutDelivery['status'] = 'delivered'): LogoutDelivery => ({ clientId, status, attemptedAt: at, messageId: `bcl-${at}`, error: status === 'failed' ? `failed at ${at}` : undefined });

    test('none until recorded; a later attempt replaces the last, an earlier one recorded late does not', async () => {
      const { store } = instances;
      const clientId = unique('client');
      assert.equal(await store.logoutDeliveries.get(clientId), undefined);
      await store.logoutDeliveries.record(attempt(clientId, T0 + 2, 'failed'));
      assert.deepEqual(await store.logoutDeliveries.get(clientId), attempt(clientId, T0 + 2, 'failed'));
      await store.logoutDeliveries.record(attempt(clientId, T0 + 1));
      assert.deepEqual(await store.logoutDeliveries.get(clientId), attempt(clientId, T0 + 2, 'failed'), 'the earlier attempt does not replace it');
      await store.logoutDeliveries.record(attempt(clientId, T0 + 3));
      assert.deepEqual(await store.logoutDeliveries.get(clientId), attempt(clientId, T0 + 3));
      assert.equal(await store.logoutDeliveries.get(unique('client')), undefined, 'per client');
    });

    test('two instances recording attempts at once: the latest attempt is the one kept', async () => {
      const { store, other } = instances;
      const clientId = unique('client');
      const times = Array.from({ length: RACERS }, (_, i) => T0 + i);
      // Shuffled, half through each instance.
      const order = [...times].sort(() => Math.random() - 0.5);
      await Promise.all(order.map((at, i) => (i % 2 === 0 ? store : other).logoutDeliveries.record(attempt(clientId, at, at % 3 === 0 ? 'failed' : 'delivered'))));
      const latest = times.at(-1)!;
      assert.deepEqual(await store.logoutDeliveries.get(clientId), attempt(clientId, latest, latest % 3 === 0 ? 'failed' : 'delivered'));
    });
  });
}
