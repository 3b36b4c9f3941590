import type { Token } from '../domain/grant.ts';
import { hashSecret } from '../lib/hash.ts';
import { userInfoClaims } from './claims.ts';
import type { OAuthDeps } from './deps.ts';
import { InsufficientScope, InvalidToken } from './errors.ts';

/** An access token that is live at `now`: known, an access token, not revoked and not expired. */
export async function findLiveAccessToken(deps: Pick<OAuthDeps, 'store'>, accessToken: string, now: number): Promise<Token | undefined> {
  if (accessToken.length > 512) return undefined;
  const token = await deps.store.tokens.find(hashSecret(accessToken));
  if (!token || token.kind !== 'access_token' || token.revokedAt !== undefined) return undefined;
  if (token.expiresAt !== undefined && now >= token.expiresAt) return undefined;
  return token;
}

/** The UserInfo endpoint (OIDC Core §5.3): the claims of the token's user that its scope releases. */
export async function userInfo(deps: OAuthDeps, accessToken: string): Promise<Record<string, unknown>> {
  const token = await findLiveAccessToken(deps, accessToken, deps.clock.now());
  if (!token) throw new InvalidToken('The access token is invalid or has expired.');
  if (!token.scope.split(' ').includes('openid')) throw new InsufficientScope('The access token was not issued for openid.', 'openid');
  const user = await deps.store.users.getProfile(token.userId);
  if (!user || user.status !== 'enabled') throw new InvalidToken('The access token is invalid or has expired.');
  return userInfoClaims(deps.config.issuer, token, user);
}
