// readOnce (scope.ts, PR11): a grant's reader that asks the store for each client and each declared
// scope value at most once, hits and misses alike, and answers as the store would.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Client } from '../domain/client.ts';
import { readOnce, type AudienceReader } from './scope.ts';

/** A store of one client and one declared value that records what it was asked. */
function recordingStore(): { store: AudienceReader; asked: string[] } {
  const asked: string[] = [];
  const client = { clientId: 'api', active: true } as Client;
  const store: AudienceReader = {
    get: async (clientId) => {
      asked.push(`get ${clientId}`);
      return clientId === 'api' ? client : undefined;
    },
    resourceScopeOwners: async (values) => {
      asked.push(`owners ${values.join(' ')}`);
      return new Map(values.filter((value) => value === 'read:orders').map((value) => [value, 'api']));
    },
  };
  return { store, asked };
}

describe('readOnce', () => {
  test('reads each client and each scope value once, misses included, and answers as the store does', async () => {
    const { store, asked } = recordingStore();
    const reader = readOnce(store);
    for (let round = 0; round < 2; round++) {
      assert.equal((await reader.get('api'))?.clientId, 'api');
      assert.equal(await reader.get('nobody'), undefined);
      assert.deepEqual(await reader.resourceScopeOwners(['read:orders', 'api']), new Map([['read:orders', 'api']]));
    }
    // A value not asked for before is read alone; the ones read are not asked again.
    assert.deepEqual(await reader.resourceScopeOwners(['api', 'write:orders', 'read:orders']), new Map([['read:orders', 'api']]));
    assert.deepEqual(asked, ['get api', 'get nobody', 'owners read:orders api', 'owners write:orders']);
  });

  test('a new reader (the next request) reads again', async () => {
    const { store, asked } = recordingStore();
    await readOnce(store).get('api');
    await readOnce(store).get('api');
    assert.deepEqual(asked, ['get api', 'get api']);
  });
});
