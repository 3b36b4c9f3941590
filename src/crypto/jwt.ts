import { createLocalJWKSet, jwtVerify, SignJWT, type JWK, type JWTPayload } from 'jose';
import type { ActiveKey } from './key-ring.ts';

/** Signs a JWT with the active key; the header carries `kid` (OIDC Core §10.1) and `typ: JWT`. */
export async function signJwt(payload: JWTPayload, key: ActiveKey): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}

export interface VerifyOptions {
  issuer: string;
  audience?: string;
  /** Accept tokens whose exp has passed (id_token_hint at logout, OIDC RP-Initiated Logout §2). */
  allowExpired?: boolean;
  now: number;
}

/** Verifies a JWT we signed ourselves: RS256 only, against our published keys. */
export async function verifyOwnJwt(token: string, jwks: { keys: JWK[] }, options: VerifyOptions): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), {
    algorithms: ['RS256'],
    issuer: options.issuer,
    ...(options.audience ? { audience: options.audience } : {}),
    currentDate: new Date(options.now),
    ...(options.allowExpired ? { maxTokenAge: undefined, clockTolerance: Number.MAX_SAFE_INTEGER } : { clockTolerance: 5 }),
  });
  return payload;
}
