import { hashSecret } from '../lib/hash.ts';
import { familyFingerprint, fingerprint } from '../observability/audit.ts';
import { authenticateClient } from './client-auth.ts';
import { CLIENT_AUTH_PARAMS } from './client-auth/registry.ts';
import type { OAuthDeps } from './deps.ts';
import { ENDPOINT_PATHS } from './discovery.ts';
import { requiredParam, rejectRepeated, type RawParams } from './params.ts';
import { MAX_TOKEN_LENGTH } from './issue-tokens.ts';

/** The request's own parameters (RFC 7009 §2.1); the client-auth ones come from the auth methods. None may be repeated. */
export const REVOCATION_PARAMS = ['token', 'token_type_hint'] as const;

/**
 * Token revocation (RFC 7009 §2.1). The client may revoke only its own tokens; an unknown token,
 * or another client's, gets the same 200 and nothing is revoked (§2.2: invalid tokens are not an
 * error, and the answer must not tell a prober which tokens exist). Revoking a refresh token
 * revokes its family, including the access tokens issued with it.
 */
export async function revoke(deps: OAuthDeps, authorization: string | undefined, body: RawParams, ip?: string): Promise<void> {
  rejectRepeated(body, [...REVOCATION_PARAMS, ...CLIENT_AUTH_PARAMS]);
  const { client } = await authenticateClient(deps, { authorization, body, ip }, { name: 'revocation', url: `${deps.config.issuer}${ENDPOINT_PATHS.revocation}` });
  const presented = requiredParam(body, 'token');
  if (presented.length > MAX_TOKEN_LENGTH) return;
  const tokenHash = hashSecret(presented);
  const token = await deps.store.tokens.find(tokenHash);
  if (!token || token.clientId !== client.clientId) return;
  const now = deps.clock.now();
  const revoked = token.kind === 'refresh_token' ? await deps.store.tokens.revokeFamily(token.familyId, now) : Number(await deps.store.tokens.revoke(tokenHash, now));
  deps.audit.emit({ event: 'token.revoked', clientId: client.clientId, ...(token.userId === undefined ? {} : { userId: token.userId }), kind: token.kind, token: fingerprint(presented), family: familyFingerprint(token.familyId), revoked, ip });
}
