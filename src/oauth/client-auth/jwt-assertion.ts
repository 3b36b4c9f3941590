/**
 * What private_key_jwt and client_secret_jwt share (RFC 7523 §2.2, §3; RFC 7521 §4.2; OIDC Core
 * §9): how an assertion request is recognised and read, and the claims every assertion must
 * carry. The two methods differ only in the key that verifies the signature.
 */
import { AssertionRejected, peekAlg, peekClaims, verifyAssertionJwt, type AssertionKey } from '../../crypto/client-assertion.ts';
import type { Client } from '../../domain/client.ts';
import { hashSecret } from '../../lib/hash.ts';
import { InvalidClient, InvalidRequest } from '../errors.ts';
import { param, type RawParams } from '../params.ts';
export type { AssertionKey } from '../../crypto/client-assertion.ts';
import { MAX_CREDENTIAL_LENGTH, type ClientAuthDeps, type ClientAuthEndpointContext, type ClientAuthRequest, type Presented } from './method.ts';

/** RFC 7523 §2.2: the client_assertion_type of a JWT client assertion. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The body parameters an assertion request is read from (RFC 7521 §4.2), plus those refused next to it. */
export const ASSERTION_PARAMS = ['client_assertion_type', 'client_assertion', 'client_id', 'client_secret'] as const;

/** The longest client_assertion looked at: a JWT with the claims RFC 7523 asks for, signed with a 4096-bit RSA key, is under 1 KiB. */
export const MAX_ASSERTION_LENGTH = 4096;

/** An assertion's exp may be at most this far ahead of now (a short-lived assertion; RFC 7523 §3 item 4 lets the server limit it). */
export const MAX_ASSERTION_LIFETIME_MS = 60 * 60_000;

/** Clock skew allowed on exp, nbf and iat, in seconds. */
export const ASSERTION_LEEWAY_S = 30;

/** The longest jti accepted. */
const MAX_JTI_LENGTH = 256;

/** Whether the request carries a client assertion (either of its two parameters). */
export function isAssertionRequest(body: RawParams): boolean {
  return param(body, 'client_assertion_type') !== undefined || param(body, 'client_assertion') !== undefined;
}

/** The JWS `alg` of the request's assertion, or undefined when there is none or it is not a JWS. */
export function assertionAlg(body: RawParams): string | undefined {
  const assertion = param(body, 'client_assertion');
  if (assertion === undefined || assertion.length > MAX_ASSERTION_LENGTH) return undefined;
  return peekAlg(assertion);
}

/**
 * Refuses a client assertion next to another method's credentials (RFC 6749 §2.3: a client uses
 * one method per request). Called by the secret methods, which are tried first.
 */
export function refuseAssertionBeside(body: RawParams, other: string): void {
  if (param(body, 'client_assertion') !== undefined || param(body, 'client_assertion_type') !== undefined) {
    throw new InvalidRequest(`Use one client authentication method, not both ${other} and client_assertion.`);
  }
}

/**
 * Reads an assertion request (RFC 7521 §4.2): the type must be jwt-bearer, the assertion a JWT
 * whose iss and sub are both the client_id (RFC 7523 §3 items 1–2; OIDC Core §9), and a client_id
 * sent beside it must be the same. Nothing is verified yet: the client named is looked up first.
 */
export function presentAssertion({ body }: ClientAuthRequest): Presented {
  const type = param(body, 'client_assertion_type');
  const assertion = param(body, 'client_assertion');
  const clientId = param(body, 'client_id');
  if (param(body, 'client_secret') !== undefined) throw new InvalidRequest('Use one client authentication method, not both client_secret and client_assertion.');
  if (type === undefined) throw new InvalidRequest('The client_assertion_type parameter is missing.');
  if (type !== JWT_BEARER_ASSERTION) throw new InvalidClient(`The client_assertion_type must be ${JWT_BEARER_ASSERTION}.`, { detail: 'unsupported client_assertion_type' });
  if (assertion === undefined) throw new InvalidRequest('The client_assertion parameter is missing.');
  if (assertion.length > MAX_ASSERTION_LENGTH) throw new InvalidClient('The client assertion is too long.', { detail: 'client_assertion too long' });
  const claims = peekClaims(assertion);
  if (!claims) throw new InvalidClient('The client assertion is not a JWT.', { detail: 'malformed client_assertion' });
  const { iss, sub } = claims;
  if (typeof sub !== 'string' || sub === '' || sub.length > MAX_CREDENTIAL_LENGTH || iss !== sub) {
    throw new InvalidClient('The client assertion must have iss and sub both equal to the client_id.', { detail: 'assertion iss/sub is not one client_id' });
  }
  if (clientId !== undefined && clientId !== sub) throw new InvalidClient('client_id differs from the client assertion\'s sub.', { detail: 'client_id differs from assertion sub' });
  return { clientId: sub, assertion };
}

/** The algorithms a client may sign with: its registered token_endpoint_auth_signing_alg, else every one the method accepts. */
export function allowedAlgs(client: Client, methodAlgs: readonly string[]): string[] {
  const registered = client.metadata.token_endpoint_auth_signing_alg;
  return typeof registered === 'string' ? methodAlgs.filter((alg) => alg === registered) : [...methodAlgs];
}

/**
 * Verifies the signature (by `key`, with one of `algorithms`; jose never accepts `none`) and the
 * claims (RFC 7523 §3): iss = sub = client_id; aud the issuer or this endpoint's URL (a string, or
 * an array holding one of them); exp required, not past, at most 60 minutes ahead; nbf and iat not
 * in the future; jti required — then records the jti, once across every instance, until exp.
 * Throws InvalidClient; NoMatchingKey (src/crypto/client-assertion.ts) is rethrown as it is so
 * the caller may refetch the client's keys.
 */
export async function verifyAssertion(client: Client, presented: Presented, key: AssertionKey, algorithms: string[], endpoint: ClientAuthEndpointContext, deps: Pick<ClientAuthDeps, 'clock' | 'issuer' | 'assertions'>): Promise<void> {
  const now = deps.clock.now();
  const refuse = (detail: string) => new InvalidClient('Client authentication failed.', { detail });
  if (algorithms.length === 0) throw refuse('no signing algorithm allowed for this client');
  let payload;
  try {
    payload = await verifyAssertionJwt(presented.assertion ?? '', key, {
      algorithms,
      issuer: client.clientId,
      subject: client.clientId,
      audience: [deps.issuer, endpoint.url],
      requiredClaims: ['exp', 'jti'],
      now,
      leewaySeconds: ASSERTION_LEEWAY_S,
    });
  } catch (error) {
    if (error instanceof AssertionRejected) throw refuse(`client assertion: ${error.message}`);
    throw error;
  }
  const nowS = now / 1000;
  const exp = payload.exp!;
  if (exp * 1000 - now > MAX_ASSERTION_LIFETIME_MS + ASSERTION_LEEWAY_S * 1000) throw refuse('client assertion exp is more than 60 minutes ahead');
  if (payload.iat !== undefined && payload.iat > nowS + ASSERTION_LEEWAY_S) throw refuse('client assertion iat is in the future');
  const { jti } = payload;
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) throw refuse('client assertion jti must be a non-empty string of at most 256 characters');
  // One statement decides and records (AssertionStore race rule): of N racing copies, one passes.
  // Kept as long as the assertion could be accepted: until exp plus the leeway.
  const first = await deps.assertions.useOnce(hashSecret(`${client.clientId}\n${jti}`), Math.ceil((exp + ASSERTION_LEEWAY_S) * 1000), now);
  if (!first) throw refuse('client assertion replayed: its jti was already used');
}
