import { verifyOwnJwt } from '../crypto/jwt.ts';
import type { OAuthDeps } from './deps.ts';
import { InvalidRequest } from './errors.ts';

/** What an id_token_hint tells: whose token it was, for which client(s), from which session. */
export interface IdTokenHint {
  sub: string;
  /** `aud` as a list. */
  audiences: string[];
  /** The client it was issued to: `azp`, else the single audience. */
  clientId: string | undefined;
  sessionIndex: string | undefined;
}

/**
 * Verifies an ID token that we issued, accepting it after its expiry: an id_token_hint names a
 * user, it grants nothing (OIDC Core §3.1.2.1; RP-Initiated Logout 1.0 §2). A token we did not
 * sign, or one without `sub`, is an invalid request.
 */
export async function verifyIdTokenHint(deps: Pick<OAuthDeps, 'config' | 'keyRing' | 'clock'>, token: string): Promise<IdTokenHint> {
  let claims: Record<string, unknown>;
  try {
    claims = await verifyOwnJwt(token, await deps.keyRing.jwks(), { issuer: deps.config.issuer, allowExpired: true, now: deps.clock.now() });
  } catch (error) {
    throw new InvalidRequest('The id_token_hint is not a valid ID token from this issuer.', { cause: error, detail: (error as Error).message });
  }
  if (typeof claims.sub !== 'string') throw new InvalidRequest('The id_token_hint has no subject.');
  const audiences = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === 'string') : [];
  const azp = typeof claims.azp === 'string' ? claims.azp : undefined;
  return {
    sub: claims.sub,
    audiences,
    clientId: azp ?? (audiences.length === 1 ? audiences[0] : undefined),
    sessionIndex: typeof claims.session_index === 'string' ? claims.session_index : undefined,
  };
}
