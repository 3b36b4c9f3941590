import { NoMatchingKey } from '../../crypto/client-assertion.ts';
import { InvalidClient } from '../errors.ts';
import { allowedAlgs, assertionAlg, ASSERTION_PARAMS, isAssertionRequest, presentAssertion, verifyAssertion } from './jwt-assertion.ts';
import { JwksUnavailable, type ClientAuthMethodHandler } from './method.ts';

/**
 * Asymmetric algorithms accepted (RFC 7518 §3.1, RFC 8037 §3.1); never `none`, never HMAC.
 * Ed25519 is EdDSA over Ed25519 under its fully-specified name (RFC 9864 §2.2), the name
 * openid-client v6 signs Ed25519 keys with.
 */
const PRIVATE_KEY_JWT_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'] as const;

/**
 * private_key_jwt (OIDC Core §9, RFC 7523 §2.2): a JWT signed with the client's private key,
 * verified with the public keys it registered — inline (`jwks`) or at its `jwks_uri`, fetched
 * through deps.jwks (cached; refetched once, rate-limited, when the assertion names a kid the
 * cached set lacks: the client rotated its keys). Recognised by client_assertion_type or
 * client_assertion whose alg is not an HMAC one (those are client_secret_jwt's).
 */
export const privateKeyJwt = {
  method: 'private_key_jwt',
  params: ASSERTION_PARAMS,
  public: false,
  secret: 'none',
  usedBasic: false,
  requires: [],
  signingAlgs: PRIVATE_KEY_JWT_ALGS,
  detect: ({ body }) => isAssertionRequest(body) && !assertionAlg(body)?.startsWith('HS'),
  present: presentAssertion,
  async verify(client, presented, endpoint, deps) {
    const algorithms = allowedAlgs(client, PRIVATE_KEY_JWT_ALGS);
    const verifyWith = async (keySet: object) => {
      try {
        await verifyAssertion(client, presented, { keySet }, algorithms, endpoint, deps);
        return true;
      } catch (error) {
        if (error instanceof NoMatchingKey) return false;
        throw error;
      }
    };
    const { jwks, jwks_uri: jwksUri } = client.metadata;
    if (typeof jwks === 'object' && jwks !== null) {
      if (await verifyWith(jwks)) return;
      throw noMatchingKey();
    }
    if (typeof jwksUri !== 'string') throw new InvalidClient('Client authentication failed.', { detail: 'client registered no jwks or jwks_uri' });
    const fetched = await fetchKeys(() => deps.jwks.get(jwksUri));
    if (await verifyWith(fetched)) return;
    // An unknown kid: the client may have rotated its keys. Fetch again (at most once per
    // cooldown per URI, whatever the requests say) and try once more.
    const refreshed = await fetchKeys(() => deps.jwks.get(jwksUri, { refresh: true }));
    if (refreshed !== fetched && (await verifyWith(refreshed))) return;
    throw noMatchingKey();
  },
} as const satisfies ClientAuthMethodHandler;

async function fetchKeys(get: () => Promise<object>): Promise<object> {
  try {
    return await get();
  } catch (error) {
    // The client's key set cannot be had: the client is not authenticated (never a 5xx).
    if (error instanceof JwksUnavailable) throw new InvalidClient('Client authentication failed.', { detail: error.message });
    throw error;
  }
}

function noMatchingKey(): InvalidClient {
  return new InvalidClient('Client authentication failed.', { detail: 'no registered key matches the client assertion' });
}
