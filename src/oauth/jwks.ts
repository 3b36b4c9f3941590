/**
 * What gatehouse accepts as a client's key set, registered (`jwks`) or fetched (`jwks_uri`, RFC 7591
 * §2): the URI rules and the JWK Set rules, shared by registration (client-metadata.ts) and the
 * fetcher (src/adapters/remote-jwks.ts).
 */
import type { JwksDocument } from './client-auth/method.ts';

/** Most keys taken from one set. */
const MAX_KEYS = 100;

/** JWK members that carry private or symmetric key material (RFC 7518 §6.2.2, §6.3.2, §6.4.1). */
export const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** A jwks_uri gatehouse may fetch: https, or http on a loopback host; no user information, no fragment. Returns why not, or undefined. */
export function jwksUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not a valid absolute URL';
  }
  if (uri.length > 2048) return 'must be at most 2048 characters';
  if (url.username !== '' || url.password !== '') return 'must not contain user information';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return undefined;
  return 'must be an https URL (http only on a loopback host)';
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * A JWK Set (RFC 7517 §5) of public signing keys: an object whose `keys` is an array of 1 to 100
 * objects with a `kty` of RSA, EC or OKP and no private or symmetric member. `refuse(why)` makes
 * the error thrown. Used for a fetched set and (with a stricter caller) for a registered `jwks`.
 */
export function publicKeySet(value: unknown, refuse: (why: string) => Error): JwksDocument {
  if (typeof value !== 'object' || value === null || !Array.isArray((value as { keys?: unknown }).keys)) throw refuse('is not a JWK Set (an object with a "keys" array)');
  const keys = (value as { keys: unknown[] }).keys;
  if (keys.length === 0) throw refuse('has no keys');
  if (keys.length > MAX_KEYS) throw refuse(`has more than ${MAX_KEYS} keys`);
  for (const key of keys) {
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw refuse('has a key that is not a JSON object');
    const jwk = key as Record<string, unknown>;
    if (jwk.kty === 'oct' || PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) throw refuse('holds private or symmetric key material: publish public keys only');
    if (jwk.kty !== 'RSA' && jwk.kty !== 'EC' && jwk.kty !== 'OKP') throw refuse(`has a key of kty ${JSON.stringify(jwk.kty)}; only RSA, EC and OKP public keys are used`);
  }
  return { keys: keys as Record<string, unknown>[] };
}
