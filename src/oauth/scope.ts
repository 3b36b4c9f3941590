import { allowedAudiences, type Client } from '../domain/client.ts';
import type { ClientStore } from '../storage/ports.ts';
import { InvalidScope } from './errors.ts';
import { isLookupKey } from './lookup-key.ts';
import { SUPPORTED_SCOPES } from './scope-values.ts';

/** At most this many unknown scope values outside a client's `aud` are looked up as client_ids per request. */
const MAX_AUDIENCE_LOOKUPS = 8;

/** Scope values are space-delimited, case-sensitive strings of %x21 / %x23-5B / %x5D-7E (RFC 6749 §3.3). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export function parseScope(scope: string | undefined): string[] {
  if (scope === undefined) return [];
  const values = scope.split(' ').filter((v) => v !== '');
  for (const value of values) if (!SCOPE_TOKEN.test(value)) throw new InvalidScope('The scope parameter is malformed.');
  return [...new Set(values)];
}

/**
 * The scope granted for an authorization request: values gatehouse does not support are dropped
 * (OIDC certification expects unknown values such as offline_access to be ignored), except the
 * values that ask for an audience — see grantedAudiences, which decides them (`audiences`). When
 * the client registered a `scope`, only values from it are kept among the others (Ubisecure: "only
 * those values are allowed"); a client_id is governed by `aud` alone, a resource server's declared
 * value by both. Order follows the request.
 */
export function grantedScope(requested: string[], client: Client, audiences: ReadonlySet<string> = new Set()): string[] {
  const allowed = client.scope === undefined ? undefined : new Set(parseScope(client.scope));
  return requested.filter((value) => audiences.has(value) || (isSupported(value) && (allowed === undefined || allowed.has(value) || value === 'openid')));
}

/** Most requested values looked up at once as resource servers' declared scope values (one statement). */
const MAX_RESOURCE_SCOPE_LOOKUPS = 100;

/** What the audience rules read from the store: clients by id, declared scope values by value. */
export type AudienceReader = Pick<ClientStore, 'get' | 'resourceScopeOwners'>;

/**
 * A reader for one request that reads each client and each declared scope value at most once: a
 * grant decides its audiences (grantedAudiences) and then the token's form and `aud`
 * (accessTokenForm) from the same rows, which it used to read twice (issue 27, PR11). Made per
 * request and dropped with it, so nothing outlives the request to go stale: one read of each row
 * is at least as consistent as two, which could disagree with each other. Misses are kept too
 * (an unknown client, an undeclared value), as the second read would have found the same.
 */
export function readOnce(clients: AudienceReader): AudienceReader {
  const byId = new Map<string, Promise<Client | undefined>>();
  const owners = new Map<string, string | undefined>();
  return {
    get: (clientId) => {
      let found = byId.get(clientId);
      if (found === undefined) byId.set(clientId, (found = clients.get(clientId)));
      return found;
    },
    resourceScopeOwners: async (values) => {
      const unread = values.filter((value) => !owners.has(value));
      if (unread.length > 0) {
        const read = await clients.resourceScopeOwners(unread);
        for (const value of unread) owners.set(value, read.get(value));
      }
      return new Map(values.flatMap((value) => (owners.get(value) === undefined ? [] : [[value, owners.get(value)!] as const])));
    },
  };
}

function isSupported(value: string): boolean {
  return (SUPPORTED_SCOPES as readonly string[]).includes(value);
}

/**
 * The audiences granted to `client` among the requested scope values, as the set of values that
 * ask for one. Two kinds of value do (docs/decisions.md RS2):
 * - a resource server's client_id asks for a token meant for it (Ubisecure: `scope=openid
 *   <resource client_id>`, how identity API tokens are requested);
 * - a scope value a resource server declared (`resource_scopes`, RFC 6749 §3.3: the server
 *   defines its scope values) asks for a token meant for that server with that value; when the
 *   client registered a `scope`, only values listed there (as for OIDC values, grantedScope).
 * Either is granted only when the client's `aud` metadata lists the resource server and it is
 * active; otherwise the request is refused with invalid_scope (RFC 6749 §4.1.2.1, §5.2), never
 * silently narrowed, so a client learns why it got no such token. Without `aud` a client gets no
 * audience at all. Values that name neither are left for grantedScope to drop. At most
 * MAX_AUDIENCE_LOOKUPS values outside the allow-list are looked up as client_ids; the rest are
 * dropped as unknown, which grants nothing either.
 *
 * Client registration asks this same function whether a client's `scope` would be honoured
 * (client-registration.ts, checkScopeHonoured), so what registers is what the grants give.
 */
export async function grantedAudiences(clients: AudienceReader, client: Client, requested: string[]): Promise<Set<string>> {
  const allowList = allowedAudiences(client);
  const candidates = requested.filter((value) => !isSupported(value) && isLookupKey(value, 255));
  const owners = await clients.resourceScopeOwners(candidates.slice(0, MAX_RESOURCE_SCOPE_LOOKUPS));
  const declared = candidates.filter((value) => owners.has(value));
  const registered = client.scope === undefined ? undefined : new Set(parseScope(client.scope));
  const unregistered = declared.find((value) => registered !== undefined && !registered.has(value));
  if (unregistered !== undefined) throw new InvalidScope(`The scope value ${unregistered} is not among this client's registered scope values (client metadata scope).`);
  const outside = declared.find((value) => !allowList.has(owners.get(value)!));
  if (outside !== undefined) throw new InvalidScope(`The scope value ${outside} belongs to the resource server ${owners.get(outside)!}, which this client may not request as an audience (client metadata aud).`);

  const ids = candidates.filter((value) => !owners.has(value));
  const allowed = [...new Set([...ids.filter((value) => allowList.has(value)), ...declared.map((value) => owners.get(value)!)])];
  const others = ids.filter((value) => !allowList.has(value)).slice(0, MAX_AUDIENCE_LOOKUPS);
  const [allowedClients, otherClients] = await Promise.all([Promise.all(allowed.map((value) => clients.get(value))), Promise.all(others.map((value) => clients.get(value)))]);
  const refused = others.find((_, i) => otherClients[i] !== undefined);
  if (refused !== undefined) throw new InvalidScope(`The scope value ${refused} is a client_id this client may not request as an audience (client metadata aud).`);
  const unavailable = allowed.find((_, i) => !allowedClients[i]?.active);
  if (unavailable !== undefined) throw new InvalidScope(`The audience ${unavailable} is not an active client.`);
  return new Set([...ids.filter((value) => allowList.has(value)), ...declared]);
}

/**
 * The same rule on a scope already granted (the code, device and refresh grants, RFC 6749 §6):
 * every audience in it must still be allowed by the client's current `aud` and still be an active
 * client, and every declared scope value still declared by its resource server and, when the
 * client registered a `scope`, still listed there; or the request is invalid_scope.
 */
export async function checkGrantedAudiences(clients: AudienceReader, client: Client, scope: string[]): Promise<void> {
  const byValue = await audiencesByValue(clients, scope);
  if (byValue.size === 0) return;
  const audiences = [...new Set(byValue.values())];
  const found = new Map(await Promise.all(audiences.map(async (id) => [id, await clients.get(id)] as const)));
  const allowList = allowedAudiences(client);
  const registered = client.scope === undefined ? undefined : new Set(parseScope(client.scope));
  for (const [value, audience] of byValue) {
    // A value its resource server no longer declares is neither a declared value nor a client_id now.
    if (found.get(audience) === undefined && value === audience) throw new InvalidScope(`The scope value ${value} no longer names a resource server or a scope value one declares.`);
    if (!allowList.has(audience)) throw new InvalidScope(`The client may no longer request ${value === audience ? 'the audience' : 'the scope value'} ${value} (client metadata aud).`);
    if (value !== audience && registered !== undefined && !registered.has(value)) throw new InvalidScope(`The scope value ${value} is no longer among this client's registered scope values (client metadata scope).`);
  }
  const unavailable = audiences.find((id) => !found.get(id)?.active);
  if (unavailable !== undefined) throw new InvalidScope(`The audience ${unavailable} is not an active client.`);
}

/**
 * The audience each value of a granted scope asks for, as value → client_id: a resource server's
 * declared scope value stands for that server, any other value that is not a supported OIDC value
 * is the client_id of the server itself (a granted scope holds only supported values, audiences
 * and declared values: grantedScope). OIDC values ask for none and are absent. The one place that
 * tells them apart; one statement when the scope holds any such value, none otherwise.
 */
export async function audiencesByValue(clients: Pick<ClientStore, 'resourceScopeOwners'>, scope: readonly string[], known?: ReadonlyMap<string, string>): Promise<Map<string, string>> {
  const values = scope.filter((value) => !isSupported(value));
  if (values.length === 0) return new Map();
  // `known`: the owners read already, with the token (TokenStore.introspectionRead): no statement.
  const owners = known ?? (await clients.resourceScopeOwners(values));
  return new Map(values.map((value) => [value, owners.get(value) ?? value]));
}

/**
 * The audiences of a granted scope, in scope order without duplicates: the client_ids of the
 * resource servers the token is for (audiencesByValue). Read by introspection's
 * `token_audiences`, a JWT's `aud` and format, and the consent page.
 */
export async function scopeAudiences(clients: Pick<ClientStore, 'resourceScopeOwners'>, scope: readonly string[], known?: ReadonlyMap<string, string>): Promise<string[]> {
  return [...new Set((await audiencesByValue(clients, scope, known)).values())];
}

/** A narrower scope on refresh (RFC 6749 §6): every value must have been granted originally. */
export function narrowScope(original: string[], requested: string | undefined): string[] {
  if (requested === undefined) return original;
  const wanted = parseScope(requested);
  const granted = new Set(original);
  const extra = wanted.filter((value) => !granted.has(value));
  if (extra.length > 0) throw new InvalidScope('The requested scope exceeds the scope originally granted.');
  return wanted;
}

export function formatScope(values: string[]): string {
  return values.join(' ');
}
