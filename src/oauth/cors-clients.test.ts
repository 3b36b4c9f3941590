import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '../domain/client.ts';
import type { Token } from '../domain/grant.ts';
import { hashSecret } from '../lib/hash.ts';
import type { Store } from '../storage/ports.ts';
import { clientNamedBy, clientOfAccessToken, registeredClient } from './cors-clients.ts';
import { MAX_TOKEN_LENGTH } from './issue-tokens.ts';

/** A store that knows two clients (one inactive) and one token, and counts its reads. */
function fakeStore() {
  const clients = new Map<string, Client>([
    ['spa', { clientId: 'spa', active: true } as Client],
    ['retired', { clientId: 'retired', active: false } as Client],
  ]);
  const tokens = new Map<string, Token>([[hashSecret('known-token'), { clientId: 'retired' } as Token]]);
  const reads: string[] = [];
  const store = {
    clients: { get: async (id: string) => (reads.push(`client ${id}`), clients.get(id)) },
    tokens: { find: async (hash: string) => (reads.push('token'), tokens.get(hash)) },
  } as unknown as Store;
  return { deps: { store }, reads };
}

test('clientNamedBy: the client a token request names by client_id or by the Basic user name; none when it names none or no possible client_id', async () => {
  const { deps, reads } = fakeStore();
  assert.equal((await clientNamedBy(deps, { authorization: undefined, body: { client_id: 'spa' } }))?.clientId, 'spa');
  const basic = `Basic ${Buffer.from('spa:secret').toString('base64')}`;
  assert.equal((await clientNamedBy(deps, { authorization: basic, body: {} }))?.clientId, 'spa');
  assert.equal(await clientNamedBy(deps, { authorization: undefined, body: { grant_type: 'client_credentials' } }), undefined);
  assert.equal(await clientNamedBy(deps, { authorization: undefined, body: { client_id: 'nul\u0000byte' } }), undefined);
  assert.deepEqual(reads, ['client spa', 'client spa'], 'nothing read for a request that names no client');
});

test('clientOfAccessToken: the client of a known token in any state; nothing for an unknown one; an over-long one is not looked up', async () => {
  const { deps, reads } = fakeStore();
  assert.equal((await clientOfAccessToken(deps, 'known-token'))?.clientId, 'retired');
  assert.equal(await clientOfAccessToken(deps, 'unknown-token'), undefined);
  assert.equal(await clientOfAccessToken(deps, 'x'.repeat(MAX_TOKEN_LENGTH + 1)), undefined);
  assert.deepEqual(reads, ['token', 'client retired', 'token']);
  assert.equal((await registeredClient(deps, 'retired'))?.active, false, 'an inactive client is still found');
});
