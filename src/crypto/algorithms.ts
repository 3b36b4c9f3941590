/**
 * How gatehouse generates, publishes and hashes with each JWS algorithm it signs its own tokens
 * with (ID tokens, signed UserInfo). The names, which client registration, discovery
 * (`id_token_signing_alg_values_supported`, `userinfo_signing_alg_values_supported`) and the
 * settings read, are SIGNING_ALGS in src/protocol/constants.ts; adding an algorithm is a name there
 * and a row here (the compiler asks for the row).
 */
import { createHash } from 'node:crypto';
import type { GenerateKeyPairOptions, JWK } from 'jose';
import { SIGNING_ALGS, type SigningAlg } from '../protocol/constants.ts';

export interface SigningAlgorithm {
  /** The JWS `alg` (RFC 7518 §3.1; EdDSA: RFC 8037 §3.1). */
  alg: SigningAlg;
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

const ROWS: { [A in SigningAlg]: Omit<SigningAlgorithm, 'alg'> } = {
  // The default: OIDC Core §15.1 (mandatory to implement) and Registration §2 (the default of
  // id_token_signed_response_alg). Listed first, so it is the first key created on a new store.
  RS256: { generate: { modulusLength: 2048, extractable: true }, publicMembers: ['kty', 'n', 'e'], hash: 'sha256' },
  PS256: { generate: { modulusLength: 2048, extractable: true }, publicMembers: ['kty', 'n', 'e'], hash: 'sha256' },
  ES256: { generate: { crv: 'P-256', extractable: true }, publicMembers: ['kty', 'crv', 'x', 'y'], hash: 'sha256' },
  EdDSA: { generate: { crv: 'Ed25519', extractable: true }, publicMembers: ['kty', 'crv', 'x'], hash: 'sha512' },
};

/** Every algorithm we sign with, in the order of SIGNING_ALGS. */
export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = SIGNING_ALGS.map((alg) => ({ alg, ...ROWS[alg] }));

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
