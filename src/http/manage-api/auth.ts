/**
 * Who may call the management API (docs/management-api.md, "Authentication and roles").
 *
 * Only an OAuth 2.0 bearer token in the Authorization header (RFC 6750 §2.1): never a form field
 * or query parameter (§2.2, §2.3), so a token does not end up in logs or browser history. The token
 * must be live (issued here, an access token, not revoked or expired, its client active:
 * findLiveAccessToken), be meant for the API — `gatehouse-manage-api` itself among its scope values
 * (RFC 8707 `resource` and the scope value both put it there; the API declares no scope values of
 * its own, docs/decisions.md RS5, as the identity API) — and its
 * client must still be allowed that audience by its current `aud` metadata, with the API's own
 * client registered and active. Anything else is 401 invalid_token (RFC 6750 §3.1; RFC 9068 §4:
 * a token for another audience is an invalid token at this resource server).
 *
 * The role: a user token's user must be enabled and a member of GATEHOUSE_ADMIN_GROUP (`admin`) or
 * GATEHOUSE_ADMIN_READONLY_GROUP (`reader`), read at every request, so removing someone from the
 * group takes effect at their next call; otherwise 403. A client's own token (client_credentials)
 * is `admin`: the operator who put the API in that client's `aud` is who let it manage
 * (docs/decisions.md MA2).
 */
import type { FastifyRequest } from 'fastify';
import { isRefused, manageApiCaller } from '../../manage/api-callers.ts';
import type { Actor } from '../../observability/audit.ts';
import type { HttpDeps } from '../deps.ts';
import { forbidden, ManageProblem } from './errors.ts';
import type { ManageCaller } from './route.ts';

export const REALM = 'gatehouse management API';

/** RFC 6750 §3: `Bearer realm="…"`, with `error` and `error_description` when a token was sent. */
export function bearerChallenge(error?: { error: string; description: string }): string {
  const parts = [`Bearer realm="${REALM}"`];
  if (error) parts.push(`error="${error.error}"`, `error_description="${error.description.replace(/["\\]/g, "'")}"`);
  return parts.join(', ');
}

/** 401: no token (no error attribute, RFC 6750 §3.1), or a token this API does not accept (invalid_token). */
function unauthorized(description: string, tokenSent: boolean): ManageProblem {
  const challenge = tokenSent ? bearerChallenge({ error: 'invalid_token', description }) : bearerChallenge();
  return new ManageProblem(401, 'Unauthorized', description, { headers: { 'www-authenticate': challenge } });
}

/** RFC 6750 §2.1: `Bearer` (any case), one space or more, then a b64token (RFC 7235 token68). */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The token of the request's Authorization header; a 401 when there is none or it is not a Bearer credential. */
function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (header === undefined || header === '') throw unauthorized('A bearer access token is required (Authorization: Bearer <token>).', false);
  const match = BEARER.exec(header);
  if (!match) throw unauthorized('The Authorization header is not a Bearer credential.', true);
  return match[1]!;
}

/** The caller of a request: who they are and their role (manageApiCaller); a ManageProblem (401/403) otherwise. */
export async function authenticateManager(deps: HttpDeps, request: FastifyRequest): Promise<ManageCaller> {
  const outcome = await manageApiCaller(deps, deps.config, bearerToken(request));
  if (!isRefused(outcome)) return outcome;
  if (outcome.refused === 'forbidden') throw forbidden(outcome.description);
  throw unauthorized(outcome.description, true);
}

/** Who the audit events of a caller's changes name. */
export function actorOf(caller: ManageCaller): Actor {
  return { via: 'manage-api', ...(caller.userId === undefined ? {} : { caller: caller.userId }), clientId: caller.clientId };
}
