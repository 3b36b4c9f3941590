import { hashSecret } from '../lib/hash.ts';
import { familyFingerprint, fingerprint } from '../observability/audit.ts';
import { authenticateClient } from './client-auth.ts';
import type { OAuthDeps } from './deps.ts';
import { requiredParam, rejectRepeated, type RawParams } from './params.ts';

/**
 * Token revocation (RFC 7009 §2.1). The client may revoke only its own tokens; an unknown token,
 * or another client's, gets the same 200 and nothing is revoked (§2.2: invalid tokens are not an
 * error, and the answer must not tell a prober which tokens exist). Revoking a refresh token
 * revokes its family, including the access tokens issued with it.
 */
export async function revoke(deps: OAuthDeps, authorization: string | undefined, body: RawParams, ip?: string): Promise<void> {
  rejectRepeated(body, ['token', 'token_type_hint', 'client_id', 'client_secret']);
  const { client } = await authenticateClient(deps, { authorization, body, ip }, { allowPublic: true, endpoint: 'revocation' });
  const presented = requiredParam(body, 'token');
  if (presented.length > 512) return;
  const tokenHash = hashSecret(presented);
  const token = await deps.store.tokens.find(tokenHash);
  if (!token || token.clientId !== client.clientId) return;
  const now = deps.clock.now();
  const revoked = token.kind === 'refresh_token' ? await deps.store.tokens.revokeFamily(token.familyId, now) : Number(await deps.store.tokens.revoke(tokenHash, now));
  deps.audit.emit({ event: 'token.revoked', clientId: client.clientId, userId: token.userId, kind: token.kind, token: fingerprint(presented), family: familyFingerprint(token.familyId), revoked, ip });
}
