import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '../domain/client.ts';
import type { UserProfile } from '../domain/user.ts';
import type { Store } from '../storage/ports.ts';
import { confirmationFacts, consentPageFacts, scopeServers } from './confirmation-facts.ts';

/** Resource server `orders-api` declares `orders.read`; `billing-api` is a client; `gone` was one. */
function fakeStore() {
  const clients = new Map<string, Client>([
    ['orders-api', { clientId: 'orders-api', active: true } as Client],
    ['billing-api', { clientId: 'billing-api', active: true } as Client],
  ]);
  const owners = new Map([['orders.read', 'orders-api']]);
  const asked: (readonly string[])[] = [];
  const store = {
    clients: {
      get: async (id: string) => clients.get(id),
      resourceScopeOwners: async (values: readonly string[]) => (asked.push(values), new Map(values.flatMap((v) => (owners.has(v) ? [[v, owners.get(v)!] as const] : [])))),
    },
    users: { getProfile: async (id: string) => (id === 'alice-id' ? ({ id, username: 'alice' } as UserProfile) : undefined) },
  } as unknown as Store;
  return { deps: { store }, asked };
}

test('scopeServers: each non-OIDC value\'s resource server (a declared value its owner, a client_id itself), each server\'s client or undefined when it has vanished', async () => {
  const { deps, asked } = fakeStore();
  const { audienceOf, servers } = await scopeServers(deps, ['openid', 'orders.read', 'billing-api', 'gone', 'profile']);
  assert.deepEqual([...audienceOf], [['orders.read', 'orders-api'], ['billing-api', 'billing-api'], ['gone', 'gone']]);
  assert.deepEqual([...servers].map(([id, client]) => [id, client?.clientId]), [['orders-api', 'orders-api'], ['billing-api', 'billing-api'], ['gone', undefined]]);
  assert.deepEqual(asked, [['orders.read', 'billing-api', 'gone']]);
  const oidcOnly = await scopeServers(deps, ['openid', 'email']);
  assert.deepEqual([oidcOnly.audienceOf.size, oidcOnly.servers.size, asked.length], [0, 0, 1], 'OIDC values ask the store nothing');
});

test('confirmationFacts and consentPageFacts: the signed-in user\'s username (undefined once the user is gone), the servers, and no policy claims without a policy', async () => {
  const { deps } = fakeStore();
  const facts = await confirmationFacts(deps, 'alice-id', ['openid', 'orders.read']);
  assert.equal(facts.username, 'alice');
  assert.deepEqual([...facts.servers.servers.keys()], ['orders-api']);
  assert.equal((await confirmationFacts(deps, 'deleted-id', ['openid'])).username, undefined);
  const consent = await consentPageFacts(deps, { authorizationPolicy: undefined }, 'alice-id', ['openid', 'billing-api']);
  assert.deepEqual([consent.username, [...consent.servers.audienceOf.values()], consent.policyClaims], ['alice', ['billing-api'], []]);
});
