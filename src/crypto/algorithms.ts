/**
 * The JWS algorithms gatehouse signs its own tokens with (ID tokens, signed UserInfo): one table,
 * from which key generation, verification of our own tokens, client registration and discovery
 * (`id_token_signing_alg_values_supported`, `userinfo_signing_alg_values_supported`) all read.
 * Adding an algorithm is one row here.
 */
import { createHash } from 'node:crypto';
import type { GenerateKeyPairOptions, JWK } from 'jose';

export interface SigningAlgorithm {
  /** The JWS `alg` (RFC 7518 §3.1; EdDSA: RFC 8037 §3.1). */
  alg: string;
  /** How jose generates a key pair for it. */
  generate: GenerateKeyPairOptions;
  /** The public members of its JWK (RFC 7517 §4, RFC 7518 §6, RFC 8037 §2), without kid/use/alg. */
  publicMembers: readonly (keyof JWK)[];
  /**
   * The hash of its signature, which OIDC Core §3.1.3.6 (at_hash) and §3.3.2.11 (c_hash) use: the
   * left-most half of that hash. EdDSA names no hash itself; for Ed25519 it is SHA-512 (RFC 8032
   * §5.1), as the OpenID Connect working group agreed (openid/connect issue 1125, followed by
   * zitadel/oidc#638 and ramosbugs/openidconnect-rs#130).
   */
  hash: 'sha256' | 'sha512';
}

export const SIGNING_ALGORITHMS = [
  // The default: OIDC Core §15.1 (mandatory to implement) and Registration §2 (the default of
  // id_token_signed_response_alg). Listed first, so it is the first key created on a new store.
  { alg: 'RS256', generate: { modulusLength: 2048, extractable: true }, publicMembers: ['kty', 'n', 'e'], hash: 'sha256' },
  { alg: 'PS256', generate: { modulusLength: 2048, extractable: true }, publicMembers: ['kty', 'n', 'e'], hash: 'sha256' },
  { alg: 'ES256', generate: { crv: 'P-256', extractable: true }, publicMembers: ['kty', 'crv', 'x', 'y'], hash: 'sha256' },
  { alg: 'EdDSA', generate: { crv: 'Ed25519', extractable: true }, publicMembers: ['kty', 'crv', 'x'], hash: 'sha512' },
] as const satisfies readonly SigningAlgorithm[];

export type SigningAlg = (typeof SIGNING_ALGORITHMS)[number]['alg'];

/** Every algorithm we sign with, in table order (discovery lists them so). */
export const SIGNING_ALGS: readonly SigningAlg[] = SIGNING_ALGORITHMS.map((a) => a.alg);

/** OIDC Registration §2: a client that names no id_token_signed_response_alg gets RS256. */
export const DEFAULT_SIGNING_ALG: SigningAlg = 'RS256';

export function isSigningAlg(value: unknown): value is SigningAlg {
  return typeof value === 'string' && (SIGNING_ALGS as readonly string[]).includes(value);
}

export function signingAlgorithm(alg: SigningAlg): SigningAlgorithm {
  return SIGNING_ALGORITHMS.find((a) => a.alg === alg)!;
}

/**
 * at_hash / c_hash (OIDC Core §3.1.3.6, §3.3.2.11): base64url of the left-most half of the hash of
 * the value's ASCII octets, the hash being the one of the token's `alg` (16 bytes of SHA-256 for
 * RS256, PS256 and ES256; 32 bytes of SHA-512 for EdDSA with Ed25519).
 */
export function leftHalfHash(value: string, alg: SigningAlg): string {
  const digest = createHash(signingAlgorithm(alg).hash).update(value, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}
