import { isPublicClient, type Client } from '../../domain/client.ts';
import { hashSecret } from '../../lib/hash.ts';
import { familyFingerprint, fingerprint } from '../../observability/audit.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidGrant } from '../errors.ts';
import { issueTokens, type TokenResponse } from '../issue-tokens.ts';
import { param, requiredParam, type RawParams } from '../params.ts';
import { checkGrantedAudiences, narrowScope } from '../scope.ts';
import { activeUser } from './load-user.ts';

/**
 * The refresh_token grant (RFC 6749 §6). The token is bound to its client; a narrower scope may be
 * asked for; no ID token is returned (the spec). Public clients always get a new refresh token and
 * confidential ones when configured to (RFC 9700 §4.14.2); presenting a rotated token again revokes
 * its whole family.
 */
export async function refreshTokenGrant(deps: OAuthDeps, client: Client, body: RawParams, ip?: string): Promise<TokenResponse> {
  const presented = requiredParam(body, 'refresh_token');
  const requestedScope = param(body, 'scope');
  const now = deps.clock.now();
  const tokenHash = hashSecret(presented);

  const found = await deps.store.tokens.findWithUser(tokenHash);
  const token = found?.token;
  if (!token || token.kind !== 'refresh_token' || token.clientId !== client.clientId) throw new InvalidGrant('The refresh token is invalid.');
  if (token.revokedAt !== undefined) throw new InvalidGrant('The refresh token has been revoked.');
  if (token.expiresAt !== undefined && now >= token.expiresAt) throw new InvalidGrant('The refresh token has expired.');
  if (token.rotatedAt !== undefined) {
    const revoked = await deps.store.tokens.revokeFamily(token.familyId, now);
    deps.audit.emit({ event: 'refresh_token.reused', clientId: client.clientId, userId: token.userId, family: familyFingerprint(token.familyId), token: fingerprint(presented), revoked, ip });
    throw new InvalidGrant('The refresh token has already been used.', { detail: `refresh token reuse; family revoked (${revoked} token(s))` });
  }

  const original = token.scope === '' ? [] : token.scope.split(' ');
  const scope = narrowScope(original, requestedScope);
  // The client's `aud` may have lost an audience since the grant: a refresh keeps none it may no longer get.
  await checkGrantedAudiences(deps.store.clients, client, scope);
  const user = activeUser(found.user);
  const rotate = isPublicClient(client) || client.rotateRefreshTokens;
  if (rotate && !(await deps.store.tokens.markRotated(tokenHash, now))) {
    // Lost a race with a concurrent use of the same token: treat it as reuse.
    const revoked = await deps.store.tokens.revokeFamily(token.familyId, now);
    deps.audit.emit({ event: 'refresh_token.reused', clientId: client.clientId, userId: token.userId, family: familyFingerprint(token.familyId), token: fingerprint(presented), revoked, ip });
    throw new InvalidGrant('The refresh token has already been used.', { detail: 'concurrent refresh token reuse' });
  }
  const response = await issueTokens(
    deps,
    { client, user, scope, sessionIndex: token.sessionIndex, authTime: token.authTime, amr: token.amr, acr: token.acr, codeHash: token.codeHash, familyId: token.familyId },
    rotate ? { refreshScope: original } : { keepRefreshToken: presented },
  );
  deps.audit.emit({
    event: 'token.refreshed',
    clientId: client.clientId,
    userId: user.id,
    scope: response.scope,
    family: familyFingerprint(token.familyId),
    rotated: rotate,
    accessToken: fingerprint(response.access_token),
    refreshToken: rotate && response.refresh_token !== undefined ? fingerprint(response.refresh_token) : undefined,
    ip,
  });
  return response;
}
