/**
 * Who may call the identity API ("REST API authentication - CustomerID"; the spec's
 * Authentication section). Three methods, each switched on or off in configuration:
 *
 * 1. OAuth 2.0 bearer token (RFC 6750 §2.1): a live access token issued by this server, for the
 *    API — its scope holds the client_id of the client that stands for the API
 *    (GATEHOUSE_API_CLIENT_ID, Ubisecure's `scope=openid <CustomerID API client_id>`) — to an
 *    active client whose `aud` metadata allows that audience now, for a user the API client's
 *    authorization policy lets in (src/oauth/policy/identity-api.ts: its own policy, else the
 *    seeded `identity-api`, which admits the members of GATEHOUSE_API_GROUP until changed). A
 *    token whose subject is the client itself (client_credentials) passes the same token, client
 *    and audience checks and then acts as that client: it has no user for a policy to judge, and
 *    the operator who put the API in the client's `aud` is who let it call the API
 *    (docs/security.md, "Client tokens").
 * 2. HTTP Basic (RFC 7617) with the single account from configuration.
 * 3. The same account as the query parameters `username` and `password`. Only the query string
 *    counts, never a form body (the spec: "not form parameters in the request content").
 *
 * The check runs in onRequest, before any body is read or validated, so an unauthenticated
 * caller learns nothing about the API beyond the challenge. The account methods run under the
 * throttle (src/oauth/throttling/api-account.ts, docs/decisions.md "Hardening"): too many wrong
 * passwords are answered 429 with Retry-After.
 */
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { administratorGroups, type Authority } from '../../identity/administrators.ts';
import { constantTimeEqual } from '../../lib/hash.ts';
import { identityApiBearerCaller, isRefused } from '../../manage/api-callers.ts';
import { checkApiAccount } from '../../oauth/throttling/api-account.ts';
import type { Actor } from '../../observability/audit.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { ApiError, invalidArguments } from './errors.ts';

/** `userId` undefined: the bearer token's subject is its client (client_credentials), which calls as itself. */
export type ApiCaller = { method: 'bearer'; userId: string | undefined; clientId: string } | { method: 'basic' | 'url_params'; username: string };

const REALM = 'gatehouse identity API';

function quoted(text: string): string {
  return `"${text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?')}"`;
}

/** The challenges of the methods that are on (RFC 9110 §11.6.1: every 401 carries at least one). */
function challenges(config: Config, bearerError?: { error: string; description: string; scope?: string }): string[] {
  const bearer = [`Bearer realm=${quoted(REALM)}`];
  if (bearerError) {
    bearer.push(`error=${quoted(bearerError.error)}`, `error_description=${quoted(bearerError.description)}`);
    if (bearerError.scope) bearer.push(`scope=${quoted(bearerError.scope)}`);
  }
  const basic = `Basic realm=${quoted(REALM)}, charset="UTF-8"`;
  const out: string[] = [];
  if (config.apiAuthBearer) out.push(bearer.join(', '));
  if (config.apiAuthBasic || config.apiAuthUrlParams) out.push(basic);
  return out.length > 0 ? out : [bearer.join(', '), basic];
}

function authenticationFailed(config: Config, message: string, bearerError?: { error: string; description: string }): ApiError {
  return new ApiError(401, 'Authentication failed', message, { challenges: challenges(config, bearerError) });
}

/** The single API account; both halves are always compared, in constant time. */
function isApiAccount(config: Config, username: string, password: string): boolean {
  if (config.apiUsername === undefined || config.apiPassword === undefined) return false;
  const results = [constantTimeEqual(username, config.apiUsername), constantTimeEqual(password, config.apiPassword)];
  return results.every(Boolean);
}

async function bearer(deps: HttpDeps, token: string): Promise<ApiCaller> {
  const { config } = deps;
  const invalid = (description: string) => authenticationFailed(config, description, { error: 'invalid_token', description });
  if (!config.apiAuthBearer) throw authenticationFailed(config, 'Bearer tokens are not accepted here.');
  // Without a client standing for the API no token can have been issued for it.
  if (config.apiClientId === undefined) throw invalid('Bearer tokens are not accepted: no API client is configured.');
  const outcome = await identityApiBearerCaller(deps, config.apiClientId, token);
  if (!isRefused(outcome)) return { method: 'bearer', ...outcome };
  if (outcome.refused === 'invalid_token') throw invalid(outcome.description);
  if (outcome.refused === 'forbidden') throw new ApiError(403, 'Unauthorized', outcome.description);
  const scope = `openid ${config.apiClientId}`;
  throw new ApiError(403, 'Unauthorized', outcome.description, {
    challenges: [`Bearer realm=${quoted(REALM)}, error="insufficient_scope", error_description=${quoted(outcome.description)}, scope=${quoted(scope)}`],
  });
}

/**
 * The account's credentials under the throttle; throws unless they are right. Malformed ones
 * (`undefined`) count as a failure of the address only; a wrong password as one of the username,
 * the address and the pair.
 */
async function requireAccount(deps: HttpDeps, request: FastifyRequest, method: 'basic' | 'url_params', credentials: { username: string; password: string } | undefined, refusal: string): Promise<void> {
  const { config } = deps;
  const attempt = { username: credentials?.username ?? '', method, ip: clientAddress(request) };
  const result = await checkApiAccount(deps, attempt, () => credentials !== undefined && isApiAccount(config, credentials.username, credentials.password));
  if (result.ok) return;
  if (result.retryAfter > 0) throw new ApiError(429, 'Authentication failed', `Too many failed attempts; retry in ${result.retryAfter} seconds.`, { retryAfter: result.retryAfter });
  throw authenticationFailed(config, refusal);
}

async function basic(deps: HttpDeps, request: FastifyRequest, encoded: string): Promise<ApiCaller> {
  if (!deps.config.apiAuthBasic) throw authenticationFailed(deps.config, 'HTTP Basic authentication is not accepted here.');
  // RFC 7617 §2: base64 of user-id ":" password. Anything else is a failed attempt, not a 400.
  const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) && encoded.length % 4 === 0 ? Buffer.from(encoded, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  const credentials = colon < 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  await requireAccount(deps, request, 'basic', credentials, credentials ? 'The username or password is wrong.' : 'The Basic credentials are malformed.');
  return { method: 'basic', username: credentials!.username };
}

async function urlParams(deps: HttpDeps, request: FastifyRequest, username: unknown, password: unknown): Promise<ApiCaller> {
  if (!deps.config.apiAuthUrlParams) throw authenticationFailed(deps.config, 'Credentials in URL parameters are not accepted here.');
  const credentials = typeof username === 'string' && typeof password === 'string' ? { username, password } : undefined;
  await requireAccount(deps, request, 'url_params', credentials, credentials ? 'The username or password is wrong.' : 'Send the username and password query parameters once each.');
  return { method: 'url_params', username: credentials!.username };
}

const callers = new WeakMap<FastifyRequest, ApiCaller>();

/** Who an authenticated request's changes are attributed to in the audit log (never the account's name). */
export function actorOf(request: FastifyRequest): Actor {
  const caller = callers.get(request);
  if (caller?.method === 'bearer') return { via: 'identity-api', method: 'bearer', caller: caller.userId, clientId: caller.clientId };
  return { via: 'identity-api', method: caller?.method };
}

/**
 * The caller's authority over the administrator groups and their members
 * (src/identity/administrators.ts; docs/identity-api.md, "Administrators are out of reach"): an
 * administrator only with a bearer token whose user is a member of GATEHOUSE_ADMIN_GROUP (and
 * enabled, which `bearer` has checked), read now. The API account and a machine client's own token
 * never are: they are not management administrators, and membership of the API's group or the
 * API in a client's `aud` must not make anyone one.
 */
export async function callerAuthority(deps: HttpDeps, request: FastifyRequest): Promise<Authority> {
  const caller = callers.get(request);
  const administrator = caller?.method === 'bearer' && caller.userId !== undefined && (await deps.admin.users.isAdministrator(caller.userId));
  return { groups: administratorGroups(deps.config), administrator };
}

/**
 * The caller, or an ApiError: 401 (with challenges) when unauthenticated, 403 when not allowed,
 * 429 when the throttle makes the account's caller wait.
 */
export async function authenticate(deps: HttpDeps, request: FastifyRequest): Promise<ApiCaller> {
  const caller = await identify(deps, request);
  callers.set(request, caller);
  return caller;
}

async function identify(deps: HttpDeps, request: FastifyRequest): Promise<ApiCaller> {
  const { config } = deps;
  const query = (request.query ?? {}) as Record<string, unknown>;
  const inQuery = query.username !== undefined || query.password !== undefined;
  const header = request.headers.authorization;
  if (header !== undefined) {
    // One way only, as RFC 6750 §2 asks of bearer tokens: two credentials would leave it ambiguous who calls.
    if (inQuery) throw invalidArguments('Send credentials one way only: an Authorization header or URL parameters, not both.');
    const match = /^([A-Za-z]+) +(\S+) *$/.exec(header);
    const scheme = match?.[1]!.toLowerCase();
    if (scheme === 'bearer') return bearer(deps, match![2]!);
    if (scheme === 'basic') return basic(deps, request, match![2]!);
    throw authenticationFailed(config, 'The Authorization header is not a Bearer or Basic credential.');
  }
  if (inQuery) return urlParams(deps, request, query.username, query.password);
  throw authenticationFailed(config, 'Authentication is required.');
}
