import type { Client } from '../domain/client.ts';
import type { ClientToken, UserToken } from '../domain/grant.ts';
import type { UserProfile } from '../domain/user.ts';
import { toNumericDate } from '../lib/clock.ts';

/**
 * The names of the standard claims each scope value releases (OIDC Core §5.4), as scopeClaims
 * below releases them (when the user has a value): the consent page lists them.
 */
export const SCOPE_CLAIM_NAMES: Readonly<Record<string, readonly string[]>> = {
  openid: ['sub'],
  profile: ['name', 'given_name', 'family_name', 'preferred_username', 'updated_at'],
  email: ['email', 'email_verified'],
};

/** The standard claim names a granted scope releases, in SCOPE_CLAIM_NAMES order, without duplicates. */
export function releasedClaimNames(scope: readonly string[]): string[] {
  return [...new Set(Object.entries(SCOPE_CLAIM_NAMES).flatMap(([value, names]) => (scope.includes(value) ? names : [])))];
}

/**
 * Standard claims released by scope (OIDC Core §5.4). A claim with no value is left out rather
 * than sent as null or "" (§5.3.2).
 */
export function scopeClaims(user: UserProfile, scope: readonly string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (scope.includes('profile')) {
    const name = [user.givenName, user.familyName].filter(Boolean).join(' ');
    if (name) claims.name = name;
    if (user.givenName) claims.given_name = user.givenName;
    if (user.familyName) claims.family_name = user.familyName;
    claims.preferred_username = user.username;
    claims.updated_at = toNumericDate(user.updatedAt);
  }
  if (scope.includes('email') && user.email) {
    claims.email = user.email;
    // OIDC Core §5.1: true only when the address was verified — a link followed or an
    // administrator's explicit act (docs/email-verification.md); always beside `email`, never alone.
    claims.email_verified = user.emailVerified;
  }
  return claims;
}

/**
 * The UserInfo claim set of the spec: sub, iss, aud, exp, iat, auth_time, amr, session_index, acr
 * when configured, plus the claims the scope releases. No nonce (spec: "nonce is not listed").
 */
export function userInfoClaims(issuer: string, token: UserToken, user: UserProfile, scope: readonly string[] = token.scope.split(' ')): Record<string, unknown> {
  return {
    sub: user.id,
    iss: issuer,
    aud: token.clientId,
    ...(token.expiresAt === undefined ? {} : { exp: toNumericDate(token.expiresAt) }),
    iat: toNumericDate(token.createdAt),
    auth_time: toNumericDate(token.authTime),
    amr: token.amr,
    session_index: token.sessionIndex,
    ...(token.acr === undefined ? {} : { acr: token.acr }),
    ...scopeClaims(user, scope),
  };
}

/**
 * What introspection says of a token whose subject is its client (client_credentials): `sub` is
 * the client's id, as RFC 9068 §2.2 asks of tokens "where no resource owner is involved", and no
 * user claim at all (no auth_time, amr, session_index: nobody signed in). client_ids and user ids
 * never meet (registerClient, newUserId), so a client's `sub` names no user (RFC 9068 §5).
 */
export function clientTokenClaims(issuer: string, token: ClientToken): Record<string, unknown> {
  return {
    sub: token.clientId,
    iss: issuer,
    ...(token.expiresAt === undefined ? {} : { exp: toNumericDate(token.expiresAt) }),
    iat: toNumericDate(token.createdAt),
  };
}

/** Whether this client asked for scope claims in its ID token too (client metadata `id_token_scope_claims`). */
export function wantsScopeClaimsInIdToken(client: Client): boolean {
  return client.metadata.id_token_scope_claims === true;
}
