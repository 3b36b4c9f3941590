/**
 * Who may call the two REST APIs with a bearer token (RFC 6750): the resource servers' rules,
 * decided here over the store, so the HTTP layer only reads the header and renders the answer in
 * its API's wire format (src/http/manage-api/auth.ts, src/http/identity-api/auth.ts).
 *
 * Both read the token's client's *current* metadata, not the token's history (RFC 9068 §4: a
 * resource server refuses a token whose audience is not its own with invalid_token): taking the
 * API out of a client's `aud`, or deactivating the client, cuts off the tokens it holds at once.
 * Each read is by primary key and reads the row every time (the store caches only the parsing).
 */
import type { Config } from '../config.ts';
import { allowedAudiences } from '../domain/client.ts';
import type { Clock } from '../lib/clock.ts';
import { checkPolicyAccess } from '../oauth/policy/evaluate.ts';
import { identityApiPolicyName } from '../oauth/policy/identity-api.ts';
import { findLiveAccessToken } from '../oauth/userinfo.ts';
import type { Store } from '../storage/ports.ts';
import { MANAGE_API_CLIENT_ID } from './management-clients.ts';

export interface ApiCallerDeps {
  store: Pick<Store, 'tokens' | 'clients' | 'groups' | 'policies' | 'users'>;
  clock: Clock;
}

/** A refusal: `invalid_token` (401, RFC 6750 §3.1), `insufficient_scope` (403, §3.1) or `forbidden` (403: a valid token whose user may not call). */
export interface CallerRefused {
  refused: 'invalid_token' | 'insufficient_scope' | 'forbidden';
  description: string;
}

/** A management API caller: `admin` may change things, `reader` only read; no `userId` for a client's own token. */
export interface ManageApiCaller {
  role: 'admin' | 'reader';
  userId?: string;
  clientId: string;
}

const EXPIRED = 'The access token is invalid or has expired.';

/**
 * The management API's caller (docs/management-api.md, "Authentication and roles"): a live access
 * token with `gatehouse-manage-api` among its scope values, of an active client whose `aud` allows
 * the API, while the API's own client is registered and active. A user token's user must be
 * enabled and in GATEHOUSE_ADMIN_GROUP (`admin`) or GATEHOUSE_ADMIN_READONLY_GROUP (`reader`),
 * read at every request; a client's own token is `admin` (docs/decisions.md MA2).
 */
export async function manageApiCaller(
  deps: ApiCallerDeps,
  config: Pick<Config, 'manageAdminGroup' | 'manageReadonlyGroup'>,
  token: string,
): Promise<ManageApiCaller | CallerRefused> {
  const invalid = (description: string): CallerRefused => ({ refused: 'invalid_token', description });
  const found = await findLiveAccessToken(deps, token, deps.clock.now());
  if (!found) return invalid(EXPIRED);
  const { token: live, user } = found;
  if (!live.scope.split(' ').includes(MANAGE_API_CLIENT_ID)) return invalid('The access token was not issued for the management API.');
  const [client, api] = await Promise.all([deps.store.clients.get(live.clientId), deps.store.clients.get(MANAGE_API_CLIENT_ID)]);
  if (!client?.active || !allowedAudiences(client).has(MANAGE_API_CLIENT_ID)) return invalid('The access token was issued to a client that may not call the management API.');
  if (!api?.active) return invalid('The management API is not enabled (its client is missing or inactive; run gatehouse admin bootstrap).');
  if (live.userId === undefined) return { role: 'admin', clientId: live.clientId };
  // As at UserInfo: a user who may no longer sign in keeps no access, even with a token still live.
  if (!user || user.status !== 'enabled') return invalid(EXPIRED);
  const [admin, reader] = await Promise.all([deps.store.groups.isMember(live.userId, config.manageAdminGroup), deps.store.groups.isMember(live.userId, config.manageReadonlyGroup)]);
  if (admin) return { role: 'admin', userId: live.userId, clientId: live.clientId };
  if (reader) return { role: 'reader', userId: live.userId, clientId: live.clientId };
  return { refused: 'forbidden', description: `The token's user is not a member of the group ${JSON.stringify(config.manageAdminGroup)} or ${JSON.stringify(config.manageReadonlyGroup)}.` };
}

/**
 * The identity API's bearer caller: a live access token whose scope holds GATEHOUSE_API_CLIENT_ID
 * (Ubisecure's `scope=openid <CustomerID API client_id>`), of an active client whose `aud` allows
 * that audience now, for an enabled user the API client's authorization policy lets in (its own,
 * or the seeded `identity-api` by name, read at each request: docs/decisions.md PO11). A client's
 * own token passes the token, client and audience checks and acts as that client
 * (docs/security.md, "Client tokens"). `apiClientId` is the configured API client.
 */
export async function identityApiBearerCaller(deps: ApiCallerDeps, apiClientId: string, token: string): Promise<{ userId: string | undefined; clientId: string } | CallerRefused> {
  const invalid = (description: string): CallerRefused => ({ refused: 'invalid_token', description });
  const found = await findLiveAccessToken(deps, token, deps.clock.now());
  if (!found) return invalid(EXPIRED);
  const { token: live, user } = found;
  const client = await deps.store.clients.get(live.clientId);
  if (!client || !client.active) return invalid(EXPIRED);
  if (!allowedAudiences(client).has(apiClientId)) return invalid('The access token was issued to a client that may not call the identity API.');
  if (!live.scope.split(' ').includes(apiClientId)) return { refused: 'insufficient_scope', description: 'The access token was not issued for the identity API.' };
  // A client token: the checks above are all there is (no user, so no status and no policy).
  if (live.userId === undefined) return { userId: undefined, clientId: live.clientId };
  if (!user || user.status !== 'enabled') return invalid(EXPIRED);
  const policyName = identityApiPolicyName(await deps.store.clients.get(apiClientId));
  if (!(await checkPolicyAccess(deps.store, { authorizationPolicy: policyName }, live.userId))) {
    return { refused: 'forbidden', description: `The identity API's authorization policy ${JSON.stringify(policyName)} does not allow the token's user.` };
  }
  return { userId: live.userId, clientId: live.clientId };
}

export function isRefused<T extends object>(outcome: T | CallerRefused): outcome is CallerRefused {
  return 'refused' in outcome;
}
