/**
 * RFC 8707 resource indicators: the `resource` parameter at the authorization, token and device
 * authorization endpoints. Each value names a resource server by one of its registered
 * `resource_uris`; the token's audience is then that server's client_id, added to the granted
 * scope, where audiences live (scope.ts, scopeAudiences) — so everything downstream (the identity
 * API, introspection's token_audiences) reads them as it reads audiences asked for Ubisecure's way.
 * docs/decisions.md, "Resource servers and resource indicators".
 */
import { allowedAudiences, type Client } from '../domain/client.ts';
import type { ClientStore } from '../storage/ports.ts';
import { InvalidTarget } from './errors.ts';
import type { RawParams } from './params.ts';
import { audiencesByValue } from './scope.ts';

/** The parameter's name (RFC 8707 §2); it may be sent more than once, unlike every other. */
export const RESOURCE_PARAM = 'resource';

/** Most `resource` values one request may carry: each is one indexed read. */
export const MAX_RESOURCES = 10;

/**
 * The request's `resource` values, in order, without duplicates. RFC 8707 §2: each "MUST be an
 * absolute URI" and "MUST NOT include a fragment component"; otherwise invalid_target. An empty
 * value counts as absent (RFC 6749 §3.1).
 */
export function parseResources(raw: RawParams): string[] {
  const value = raw[RESOURCE_PARAM];
  const values = (value === undefined ? [] : Array.isArray(value) ? value : [value]).filter((v) => v !== '');
  if (values.length > MAX_RESOURCES) throw new InvalidTarget(`At most ${MAX_RESOURCES} resource parameters are accepted.`);
  for (const uri of values) {
    if (typeof uri !== 'string' || malformed(uri)) throw new InvalidTarget('The resource parameter must be an absolute URI without a fragment (RFC 8707 section 2).');
  }
  return [...new Set(values)];
}

function malformed(uri: string): boolean {
  if (uri.length > 2048 || uri.includes('#') || /[^\x21-\x7e]/.test(uri)) return true;
  return !URL.canParse(uri);
}

/**
 * The resource servers the values name, as client_ids in request order: each must be a registered
 * resource URI (compared exactly), else invalid_target. Only the mapping: whether the client may
 * have them is decided by the caller (allowedResourceAudiences, or narrowing to a grant).
 */
export async function resourceServers(clients: ClientStore, resources: readonly string[]): Promise<Client[]> {
  const found = await Promise.all(resources.map((uri) => clients.findByResourceUri(uri)));
  const unknown = resources.find((_, i) => found[i] === undefined);
  if (unknown !== undefined) throw new InvalidTarget(`The resource ${unknown} is not a registered resource server's URI.`);
  return found as Client[];
}

/**
 * The audiences a new grant gets from `resource` (the authorization and device authorization
 * endpoints, client_credentials, password): each resource server must be in the client's `aud` and
 * active, else invalid_target (RFC 8707 §2: "the client is not authorized to request a token for
 * the indicated resource"). Asked for as a scope value instead, the same audience is invalid_scope
 * (scope.ts), as before.
 */
export async function allowedResourceAudiences(clients: ClientStore, client: Client, resources: readonly string[]): Promise<string[]> {
  if (resources.length === 0) return [];
  const servers = await resourceServers(clients, resources);
  const allowList = allowedAudiences(client);
  const refused = servers.findIndex((server) => !allowList.has(server.clientId));
  if (refused >= 0) throw new InvalidTarget(`This client may not obtain tokens for the resource ${resources[refused]} (client metadata aud).`);
  const inactive = servers.findIndex((server) => !server.active);
  if (inactive >= 0) throw new InvalidTarget(`The resource ${resources[inactive]} belongs to an inactive resource server.`);
  return [...new Set(servers.map((server) => server.clientId))];
}

/** `scope` with `audiences` added after its own values (an audience already there stays where it is). */
export function withAudiences(scope: readonly string[], audiences: readonly string[]): string[] {
  return [...new Set([...scope, ...audiences])];
}

/**
 * The access token's scope when `resource` asks for some of a grant's audiences (RFC 8707 §2.2: at
 * the token endpoint the requested resource must be within the grant): each must be an audience of
 * `granted`, else invalid_target. The token then keeps the values of `scope` (the grant's, or
 * narrower by the `scope` parameter) that ask for no audience; of the grant's values that ask for
 * one, those of the requested servers — a client_id always, a server's declared scope value when
 * `scope` kept it or kept none of that server's values (resource names the server, scope the values).
 * In the grant's order. Without `resource`, `scope` as it is.
 */
export async function narrowToResources(clients: Pick<ClientStore, 'resourceScopeOwners'>, granted: readonly string[], scope: readonly string[], servers: readonly Client[], resources: readonly string[]): Promise<string[]> {
  if (servers.length === 0) return [...scope];
  const audienceOf = await audiencesByValue(clients, granted);
  const audiences = new Set(audienceOf.values());
  const outside = servers.findIndex((server) => !audiences.has(server.clientId));
  if (outside >= 0) throw new InvalidTarget(`The resource ${resources[outside]} was not granted; a token may only be narrowed to the audiences granted.`);
  const wanted = new Set(servers.map((server) => server.clientId));
  const kept = new Set(scope);
  const keptAudiences = new Set(scope.filter((value) => audienceOf.has(value) && audienceOf.get(value) !== value).map((value) => audienceOf.get(value)));
  const forWanted = granted.filter((value) => {
    const audience = audienceOf.get(value);
    if (audience === undefined || !wanted.has(audience)) return false;
    return audience === value || kept.has(value) || !keptAudiences.has(audience);
  });
  return [...scope.filter((value) => !audienceOf.has(value)), ...forWanted];
}
