import { isClientToken, type Token } from '../domain/grant.ts';
import { hashSecret } from '../lib/hash.ts';
import type { IntrospectionRead } from '../storage/ports.ts';
import { clientTokenClaims, userInfoClaims } from './claims.ts';
import { authenticateClient } from './client-auth.ts';
import { CLIENT_AUTH_METHODS, CLIENT_AUTH_PARAMS } from './client-auth/registry.ts';
import type { OAuthDeps } from './deps.ts';
import { ENDPOINT_PATHS } from './discovery.ts';
import { requiredParam, rejectRepeated, type RawParams } from './params.ts';
import { MAX_TOKEN_LENGTH } from './issue-tokens.ts';
import { tokenPolicyClaims } from './policy/evaluate.ts';
import { scopeAudiences } from './scope.ts';

const INACTIVE = Object.freeze({ active: false });

/** The request's own parameters (RFC 7662 §2.1); the client-auth ones come from the auth methods. None may be repeated. */
export const INTROSPECTION_PARAMS = ['token', 'token_type_hint'] as const;

/** Every parameter of the request, the client authentication's included: none may be repeated. Made once. */
const REPEATABLE_NONE = [...INTROSPECTION_PARAMS, ...CLIENT_AUTH_PARAMS];

/**
 * Token introspection (RFC 7662). Any authenticated confidential client may ask about an access
 * token — in the spec's use case 2 the resource server introspects tokens issued to the native
 * app — but about a refresh token only the client it was issued to. An active token
 * answers with the UserInfo claims plus active, aud (the asking client), scope, client_id and
 * token_type, and the extra member `token_audiences` (§2.2 allows extensions): the client_ids of
 * the resource servers the token is for, from its scope (scope.ts, scopeAudiences), always
 * present — an empty array for a token meant for no resource server. `aud` keeps RFC 7662's
 * meaning here, the asking client (docs/decisions.md RI8); anything else with exactly `{"active":false}` (§2.2). A token whose subject is its
 * client (client_credentials) answers `sub` = its client_id (RFC 9068 §2.2) and no user claim. token_type_hint is only a hint
 * (§2.1): both kinds are looked up by the same hash.
 */
export async function introspect(deps: OAuthDeps, authorization: string | undefined, body: RawParams, ip?: string): Promise<Record<string, unknown>> {
  rejectRepeated(body, REPEATABLE_NONE);
  // The caller and the token in one statement (TokenStore.introspectionRead, issue 27): the
  // client authentication reads the caller through it, and nothing of the token is looked at
  // before the caller is authenticated. Without a token to look up, the caller alone is read.
  const lookup = typeof body.token === 'string' && body.token !== '' && body.token.length <= MAX_TOKEN_LENGTH ? body.token : undefined;
  let read: IntrospectionRead | undefined;
  const clients =
    lookup === undefined
      ? deps.store.clients
      : {
          get: async (clientId: string) => {
            read = await deps.store.tokens.introspectionRead(clientId, hashSecret(lookup));
            return read.caller;
          },
        };
  const { client: caller } = await authenticateClient(deps, { authorization, body, ip }, { name: 'introspection', url: deps.config.issuer + ENDPOINT_PATHS.introspection }, CLIENT_AUTH_METHODS, clients);
  const presented = requiredParam(body, 'token');
  if (presented.length > MAX_TOKEN_LENGTH) return INACTIVE;
  const found = read === undefined ? await deps.store.tokens.findWithUser(hashSecret(presented)) : read.found;
  // A token of a deactivated or deleted client is no longer active (RFC 7662 §2.2 leaves "active" to the server).
  if (!found || !found.clientActive || !isActive(found.token, deps.clock.now())) return INACTIVE;
  const { token, user } = found;
  // A refresh token is for its own client only: nobody else has a use for its state (RFC 6749
  // §6, §10.4), so to any other caller it is a token we do not want to tell about (RFC 7662 §4:
  // answer active=false). Access tokens stay introspectable by resource servers (§1).
  if (token.kind === 'refresh_token' && token.clientId !== caller.clientId) return INACTIVE;
  // Split once: the policy's scope gate and the audiences read the same values.
  const scope = token.scope === '' ? [] : token.scope.split(' ');
  if (isClientToken(token)) {
    return { active: true, ...clientTokenClaims(deps.config.issuer, token), aud: caller.clientId, scope: token.scope, client_id: token.clientId, token_type: token.kind, token_audiences: await scopeAudiences(deps.store.clients, scope, read?.scopeOwners) };
  }
  if (!user || user.status !== 'enabled') return INACTIVE;
  // Read only for an answer that is active: an inactive one names no audience.
  const tokenAudiences = await scopeAudiences(deps.store.clients, scope, read?.scopeOwners);
  return {
    active: true,
    ...userInfoClaims(deps.config.issuer, token, user, scope),
    // The token's client's policy, its introspection claims (docs/authorization.md); protected names cannot be among them.
    ...tokenPolicyClaims(found, 'introspection', { user, scope }),
    aud: caller.clientId,
    scope: token.scope,
    client_id: token.clientId,
    token_type: token.kind,
    token_audiences: tokenAudiences,
  };
}

function isActive(token: Token, now: number): boolean {
  if (token.revokedAt !== undefined) return false;
  if (token.expiresAt !== undefined && now >= token.expiresAt) return false;
  // A rotated refresh token is spent; its access tokens live on until they expire.
  return !(token.kind === 'refresh_token' && token.rotatedAt !== undefined);
}
