/**
 * The JOSE side of JWT client authentication (RFC 7523 §2.2, §3): reading a client assertion
 * before the client is known, and verifying its signature and registered claims with jose.
 * The rules of what an assertion must say live in src/oauth/client-auth/jwt-assertion.ts.
 */
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';

/** The JWS `alg` of `jwt`'s header, or undefined when it is not a JWS. Nothing is verified. */
export function peekAlg(jwt: string): string | undefined {
  try {
    const { alg } = decodeProtectedHeader(jwt);
    return typeof alg === 'string' ? alg : undefined;
  } catch {
    return undefined;
  }
}

/** `jwt`'s claims, unverified, or undefined when it is not a JWT. */
export function peekClaims(jwt: string): JWTPayload | undefined {
  try {
    return decodeJwt(jwt);
  } catch {
    return undefined;
  }
}

/** What verifies an assertion: a client's public key set (private_key_jwt), or its secret (client_secret_jwt). */
export type AssertionKey = { keySet: object } | { secret: string };

/** No key of the set matches the assertion's header (kid, alg): the caller may refetch the set. */
export class NoMatchingKey extends Error {
  constructor() {
    super('no key of the client matches the assertion');
    this.name = 'NoMatchingKey';
  }
}

/** The assertion's signature or registered claims do not verify; `message` says which. */
export class AssertionRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AssertionRejected';
  }
}

export interface AssertionCheck {
  algorithms: string[];
  issuer: string;
  subject: string;
  /** The aud must be, or contain, one of these. */
  audience: string[];
  requiredClaims: string[];
  now: number;
  leewaySeconds: number;
}

/** Key lookups per key set document: a client row (and so its jwks) and a fetched set are reused objects. */
const keySets = new WeakMap<object, JWTVerifyGetKey>();
function keySetOf(document: object): JWTVerifyGetKey {
  let keys = keySets.get(document);
  if (!keys) {
    keys = createLocalJWKSet(document as JSONWebKeySet);
    keySets.set(document, keys);
  }
  return keys;
}

/**
 * Verifies the signature with `key` by one of `check.algorithms` (jose never accepts `none`) and
 * the claims iss, sub, aud, exp, nbf with `check.leewaySeconds` of skew. Returns the claims.
 * Throws NoMatchingKey or AssertionRejected.
 */
export async function verifyAssertionJwt(jwt: string, key: AssertionKey, check: AssertionCheck): Promise<JWTPayload> {
  const options = {
    algorithms: check.algorithms,
    issuer: check.issuer,
    subject: check.subject,
    audience: check.audience,
    requiredClaims: check.requiredClaims,
    currentDate: new Date(check.now),
    clockTolerance: check.leewaySeconds,
  };
  try {
    const { payload } = 'secret' in key ? await jwtVerify(jwt, new TextEncoder().encode(key.secret), options) : await jwtVerify(jwt, keySetOf(key.keySet), options);
    return payload;
  } catch (error) {
    if (error instanceof errors.JWKSNoMatchingKey) throw new NoMatchingKey();
    if (error instanceof errors.JOSEError) throw new AssertionRejected(`${error.code}: ${error.message}`);
    throw new AssertionRejected((error as Error).message);
  }
}
