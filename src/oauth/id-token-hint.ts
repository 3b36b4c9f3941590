import { verifyOwnTypedJwt, type VerifiedJwt } from '../crypto/jwt.ts';
import type { OAuthDeps } from './deps.ts';
import { InvalidRequest } from './errors.ts';

/** What an id_token_hint tells: whose token it was, for which client(s), from which session. */
export interface IdTokenHint {
  sub: string;
  /** `aud` as a list. */
  audiences: string[];
  /** The client it was issued to: its `azp`. */
  clientId: string;
  sessionIndex: string | undefined;
}

/**
 * Verifies an ID token that we issued, accepting it after its expiry: an id_token_hint names a
 * user, it grants nothing (OIDC Core §3.1.2.1; RP-Initiated Logout 1.0 §2). A token we did not
 * sign, or a JWT of ours that is not an ID token (idTokenRefusal), is an invalid request.
 */
export async function verifyIdTokenHint(deps: Pick<OAuthDeps, 'config' | 'keyRing' | 'clock'>, token: string): Promise<IdTokenHint> {
  let verified: VerifiedJwt;
  try {
    verified = await verifyOwnTypedJwt(token, await deps.keyRing.jwks(), { issuer: deps.config.issuer, allowExpired: true, now: deps.clock.now() });
  } catch (error) {
    throw new InvalidRequest('The id_token_hint is not a valid ID token from this issuer.', { cause: error, detail: (error as Error).message });
  }
  const refusal = idTokenRefusal(verified);
  if (refusal !== undefined) throw new InvalidRequest(`The id_token_hint is not an ID token: ${refusal}.`);
  const { claims } = verified;
  return {
    sub: claims.sub as string,
    audiences: audiencesOf(claims.aud),
    clientId: claims.azp as string,
    sessionIndex: typeof claims.session_index === 'string' ? claims.session_index : undefined,
  };
}

/**
 * Why a JWT signed with our keys is not one of our ID tokens, or undefined when it is one. The
 * same keys sign three kinds of JWT — ID tokens, JWT access tokens (RFC 9068) and signed UserInfo
 * responses (OIDC Core §5.3.2) — and only an ID token may name a user to the authorization and
 * logout endpoints: an access token or a UserInfo response reaches resource servers, which must
 * not be able to end the user's session with it (issue 22, item 3). RFC 8725 §3.11 asks for
 * explicit typing so that one kind of JWT cannot pass for another; the rules, from the strongest:
 *
 * - `typ` absent or `JWT` (RFC 7519 §5.1, compared as a media type: case-insensitive, with or
 *   without `application/`, RFC 7515 §4.1.9), as we sign ID tokens; a JWT access token says
 *   `at+jwt` (RFC 9068 §2.1, which asks in §4 that it never pass for another kind), and any other
 *   explicit type is some other kind of token too;
 * - no `client_id` and no `scope`: every JWT access token carries both (RFC 9068 §2.2, §2.2.3),
 *   an ID token neither (OIDC Core §2 defines no such claim, and a policy cannot add them:
 *   PROTECTED_CLAIMS in src/domain/policy.ts);
 * - the ID token claims of OIDC Core §2 that tell it from a signed UserInfo response, whose `typ`
 *   is `JWT` and whose claims are otherwise the same: `azp`, the client it was issued to, which
 *   we put in every ID token since the first one and in nothing else (a policy cannot add it
 *   either), one of `aud`; and the REQUIRED `sub`, `aud`, `exp` and `iat`.
 */
export function idTokenRefusal({ claims, typ }: VerifiedJwt): string | undefined {
  // typ is one of ours (the signature is), so it is shown as it is.
  if (typ !== undefined && typ.toLowerCase().replace(/^application\//, '') !== 'jwt') return `its typ is ${typ}`;
  if ('client_id' in claims || 'scope' in claims) return 'it is an access token';
  if (typeof claims.sub !== 'string') return 'it has no subject';
  if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number') return 'it has no exp or iat';
  const audiences = audiencesOf(claims.aud);
  if (typeof claims.azp !== 'string' || !audiences.includes(claims.azp)) return 'it names no authorized party (azp) among its audiences';
  return undefined;
}

function audiencesOf(aud: unknown): string[] {
  return typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
}
