import { hashSecret } from '../../lib/hash.ts';
import type { Client } from '../../domain/client.ts';
import { familyFingerprint, fingerprint } from '../../observability/audit.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidGrant } from '../errors.ts';
import { issueTokens, type TokenResponse } from '../issue-tokens.ts';
import { param, requiredParam, type RawParams } from '../params.ts';
import { verifyPkce } from '../pkce.ts';
import { checkGrantedAudiences } from '../scope.ts';
import { loadActiveUser } from './load-user.ts';

/**
 * The authorization_code grant (RFC 6749 §4.1.3). Any redemption attempt consumes the code; a
 * second one is refused and revokes every token issued from it (the spec's rule; RFC 9700 §4.2.4).
 * The code is bound to the client, the redirect_uri, the PKCE challenge and the nonce.
 */
export async function authorizationCodeGrant(deps: OAuthDeps, client: Client, body: RawParams, ip?: string): Promise<TokenResponse> {
  const code = requiredParam(body, 'code');
  const redirectUri = requiredParam(body, 'redirect_uri');
  const verifier = param(body, 'code_verifier');
  const now = deps.clock.now();
  const codeHash = hashSecret(code);

  const redemption = await deps.store.codes.consumeOnce(codeHash, now);
  if (redemption.outcome === 'unknown') throw new InvalidGrant('The authorization code is invalid.');
  if (redemption.outcome === 'replayed') {
    const revoked = await deps.store.tokens.revokeFamily(codeHash, now);
    const replayed = redemption.code;
    deps.audit.emit({ event: 'code.replayed', clientId: client.clientId, codeClientId: replayed.clientId, userId: replayed.userId, code: fingerprint(code), revoked, ip });
    throw new InvalidGrant('The authorization code has already been used.', { detail: `code replay; ${revoked} token(s) revoked` });
  }
  const bound = redemption.code;
  if (bound.clientId !== client.clientId) throw new InvalidGrant('The authorization code was issued to another client.');
  if (now >= bound.expiresAt) throw new InvalidGrant('The authorization code has expired.');
  if (bound.redirectUri !== redirectUri) throw new InvalidGrant('redirect_uri differs from the one in the authorization request.');
  verifyPkce(bound, verifier);

  const user = await loadActiveUser(deps, bound.userId);
  const scope = bound.scope === '' ? [] : bound.scope.split(' ');
  // The authorization endpoint checked the audiences against `aud`; the client may have changed since.
  await checkGrantedAudiences(deps.store.clients, client, scope);
  // The family is named by the code's hash, so a replay finds every token descending from it.
  const familyId = codeHash;
  const response = await issueTokens(
    deps,
    { client, user, scope, sessionIndex: bound.sessionIndex, authTime: bound.authTime, amr: bound.amr, acr: bound.acr, codeHash, familyId },
    {
      idToken: scope.includes('openid') ? { nonce: bound.nonce } : undefined,
      refreshScope: issuesRefreshTokens(client) ? scope : undefined,
    },
  );
  // A replay that raced this redemption may have revoked before our tokens existed: check again,
  // and revoke them ourselves. The first redemption still gets its answer, exactly as when the
  // replay comes later: one 200 per code, and its tokens revoked once a replay is seen.
  if (await deps.store.codes.wasReplayed(codeHash)) {
    const revoked = await deps.store.tokens.revokeFamily(codeHash, now);
    deps.audit.emit({ event: 'code.replayed', clientId: client.clientId, codeClientId: bound.clientId, userId: bound.userId, code: fingerprint(code), revoked, ip });
  }
  deps.audit.emit({
    event: 'token.issued',
    grantType: 'authorization_code',
    clientId: client.clientId,
    userId: user.id,
    scope: response.scope,
    family: familyFingerprint(familyId),
    accessToken: fingerprint(response.access_token),
    refreshToken: response.refresh_token === undefined ? undefined : fingerprint(response.refresh_token),
    idToken: response.id_token !== undefined,
    ip,
  });
  return response;
}

export function issuesRefreshTokens(client: Client): boolean {
  return client.refreshTokens && client.grantTypes.includes('refresh_token');
}
