import { signJwt } from '../crypto/jwt.ts';
import { isClientToken } from '../domain/grant.ts';
import type { Store, TokenWithUser } from '../storage/ports.ts';
import { hashSecret } from '../lib/hash.ts';
import { userInfoClaims } from './claims.ts';
import type { OAuthDeps } from './deps.ts';
import { InsufficientScope, InvalidToken } from './errors.ts';
import { MAX_TOKEN_LENGTH } from './issue-tokens.ts';
import { tokenPolicyClaims } from './policy/evaluate.ts';

/**
 * An access token that is live at `now` (known, an access token, not revoked and not expired, and
 * its client still registered and active), with its user's profile (undefined when the user is
 * gone). A deactivated or deleted client is refused at every endpoint (docs/cli.md), so its
 * tokens die with it rather than live on until they expire.
 */
export async function findLiveAccessToken(deps: { store: Pick<Store, 'tokens'> }, accessToken: string, now: number): Promise<TokenWithUser | undefined> {
  if (accessToken.length > MAX_TOKEN_LENGTH) return undefined;
  const found = await deps.store.tokens.findWithUser(hashSecret(accessToken));
  if (!found) return undefined;
  const { token } = found;
  if (token.kind !== 'access_token' || token.revokedAt !== undefined) return undefined;
  if (token.expiresAt !== undefined && now >= token.expiresAt) return undefined;
  if (!found.clientActive) return undefined;
  return found;
}

/**
 * The UserInfo endpoint (OIDC Core §5.3): the claims of the token's user that its scope releases,
 * as JSON, or — for a client that registered `userinfo_signed_response_alg` — as a JWT signed
 * with that algorithm, carrying `iss` and `aud` (OIDC Core §5.3.2), served as application/jwt.
 */
/** The answer, and the client the token was issued to (the HTTP layer's CORS check reads it instead of the token again). */
export type UserInfoAnswer = ({ claims: Record<string, unknown> } | { jwt: string }) & { clientId: string };

export async function userInfo(deps: OAuthDeps, accessToken: string): Promise<UserInfoAnswer> {
  const found = await findLiveAccessToken(deps, accessToken, deps.clock.now());
  if (!found) throw new InvalidToken('The access token is invalid or has expired.');
  const { token, user, clientUserinfoAlg } = found;
  // A token whose subject is its client (client_credentials) has no user to describe: UserInfo
  // returns claims about the authenticated End-User (OIDC Core §5.3), so such a token is not a
  // credential for it, and RFC 6750 §3.1's invalid_token is the answer for a token that cannot be
  // used here. Checked before the scope, which such a token can never satisfy anyway.
  if (isClientToken(token)) throw new InvalidToken('The access token has no user: it was issued to a client for itself.');
  // Split once: the openid check, the scope's claims and the policy's read the same values.
  const scope = token.scope.split(' ');
  if (!scope.includes('openid')) throw new InsufficientScope('The access token was not issued for openid.', 'openid');
  if (!user || user.status !== 'enabled') throw new InvalidToken('The access token is invalid or has expired.');
  // The claims carry iss and aud (the client_id) either way.
  // Plus the policy's userinfo claims, read now: a changed attribute shows at the next request.
  const standard = userInfoClaims(deps.config.issuer, token, user, scope);
  const claims = found.clientPolicy === undefined ? standard : { ...standard, ...tokenPolicyClaims(found, 'userinfo', { user, scope }) };
  if (clientUserinfoAlg === undefined) return { claims, clientId: token.clientId };
  return { jwt: await signJwt(claims, await deps.keyRing.activeKey(clientUserinfoAlg)), clientId: token.clientId };
}
