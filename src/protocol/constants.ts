/**
 * Protocol constants: the values gatehouse speaks on the wire and lists in its settings, shared by
 * config.ts, the domain, crypto, the protocol core and the front ends. They depend on nothing, so
 * any layer may import them.
 */

/**
 * The JWS algorithms gatehouse signs its own tokens with (ID tokens, signed UserInfo, JWT access
 * tokens), in the order discovery lists them (`id_token_signing_alg_values_supported`, …). How each
 * is generated and hashed is src/crypto/algorithms.ts, which must give every name here a row.
 */
export const SIGNING_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

/** OIDC Registration §2: a client that names no id_token_signed_response_alg gets RS256. */
export const DEFAULT_SIGNING_ALG: SigningAlg = 'RS256';

export function isSigningAlg(value: unknown): value is SigningAlg {
  return typeof value === 'string' && (SIGNING_ALGS as readonly string[]).includes(value);
}

/**
 * The two forms of access token gatehouse issues. `opaque`: a random string that means something
 * only to gatehouse (resource servers introspect it, RFC 7662); `jwt`: a JWT access token a resource
 * server can validate locally (RFC 9068).
 */
export const ACCESS_TOKEN_FORMATS = ['opaque', 'jwt'] as const;
export type AccessTokenFormat = (typeof ACCESS_TOKEN_FORMATS)[number];
