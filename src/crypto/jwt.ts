import { createLocalJWKSet, jwtVerify, SignJWT, type JWK, type JWTPayload } from 'jose';
import { SIGNING_ALGS } from '../protocol/constants.ts';
import type { ActiveKey } from './key-ring.ts';

/**
 * Signs a JWT with an active key, in its algorithm; the header carries `kid` (OIDC Core §10.1) and
 * `typ`: `JWT`, or `at+jwt` for an access token (RFC 9068 §2.1).
 */
export async function signJwt(payload: JWTPayload, key: ActiveKey, typ = 'JWT'): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ }).sign(key.privateKey);
}

export interface VerifyOptions {
  issuer: string;
  audience?: string;
  /** Accept tokens whose exp has passed (id_token_hint at logout, OIDC RP-Initiated Logout §2). */
  allowExpired?: boolean;
  now: number;
}

/** A JWT we signed: its claims and its header's `typ`, undefined when absent (RFC 7515 §4.1.9). */
export interface VerifiedJwt {
  claims: JWTPayload;
  typ: string | undefined;
}

/**
 * Verifies a JWT we signed ourselves, against our published keys: any algorithm we sign with
 * (src/crypto/algorithms.ts), and only with a key published for that algorithm (jose matches the
 * header's alg to the JWK's `alg`), never `none` or an HMAC. Also returns the header's `typ`, so
 * the caller can tell the kinds of JWT we sign with the same keys apart (RFC 8725 §3.11).
 */
export async function verifyOwnTypedJwt(token: string, jwks: { keys: JWK[] }, options: VerifyOptions): Promise<VerifiedJwt> {
  const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), {
    algorithms: [...SIGNING_ALGS],
    issuer: options.issuer,
    ...(options.audience ? { audience: options.audience } : {}),
    currentDate: new Date(options.now),
    ...(options.allowExpired ? { maxTokenAge: undefined, clockTolerance: Number.MAX_SAFE_INTEGER } : { clockTolerance: 5 }),
  });
  return { claims: payload, typ: protectedHeader.typ };
}

/** verifyOwnTypedJwt's claims alone. */
export async function verifyOwnJwt(token: string, jwks: { keys: JWK[] }, options: VerifyOptions): Promise<JWTPayload> {
  return (await verifyOwnTypedJwt(token, jwks, options)).claims;
}
