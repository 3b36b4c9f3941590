/**
 * What the pages that ask a signed-in user to agree show, read for them: the consent page of a
 * third-party client (issue 13, item 4) and the device flow's confirmation (RFC 8628 §3.3). The
 * HTTP layer (src/http/interaction/consent-page.ts, device-routes.ts) only puts them into words;
 * it reaches the store through these use cases, not directly (issue 23, item 2).
 */
import type { Client } from '../domain/client.ts';
import type { OAuthDeps } from './deps.ts';
import { policyClaimNames } from './policy/evaluate.ts';
import { audiencesByValue } from './scope.ts';

type FactsDeps = Pick<OAuthDeps, 'store'>;

/**
 * The resource servers a granted scope names: `audienceOf`, each value's audience (a declared
 * value → its server's client_id, a client_id → itself; audiencesByValue; OIDC values absent),
 * and `servers`, each of those client_ids' registered client, undefined when it has vanished.
 */
export interface ScopeServers {
  audienceOf: ReadonlyMap<string, string>;
  servers: ReadonlyMap<string, Client | undefined>;
}

export async function scopeServers(deps: FactsDeps, scope: readonly string[]): Promise<ScopeServers> {
  const audienceOf = await audiencesByValue(deps.store.clients, scope);
  const ids = [...new Set(audienceOf.values())];
  const clients = await Promise.all(ids.map((id) => deps.store.clients.get(id)));
  return { audienceOf, servers: new Map(ids.map((id, i) => [id, clients[i]])) };
}

/** The device confirmation's facts: who is signed in (undefined when the user is gone) and the scope's resource servers. */
export interface ConfirmationFacts {
  username: string | undefined;
  servers: ScopeServers;
}

export async function confirmationFacts(deps: FactsDeps, userId: string, scope: readonly string[]): Promise<ConfirmationFacts> {
  const [user, servers] = await Promise.all([deps.store.users.getProfile(userId), scopeServers(deps, scope)]);
  return { username: user?.username, servers };
}

/** The consent page's facts: the confirmation's, and the claims the client's policy releases for the scope (policyClaimNames). */
export interface ConsentPageFacts extends ConfirmationFacts {
  policyClaims: string[];
}

export async function consentPageFacts(deps: FactsDeps, client: Pick<Client, 'authorizationPolicy'>, userId: string, scope: readonly string[]): Promise<ConsentPageFacts> {
  const [facts, policyClaims] = await Promise.all([confirmationFacts(deps, userId, scope), policyClaimNames(deps.store, client, userId, scope)]);
  return { ...facts, policyClaims };
}
