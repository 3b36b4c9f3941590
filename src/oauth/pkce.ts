import { createHash } from 'node:crypto';
import type { Client, PkceMethod } from '../domain/client.ts';
import { isPublicClient, PKCE_METHODS } from '../domain/client.ts';
import { constantTimeEqual } from '../lib/hash.ts';
import { InvalidGrant, InvalidRequest } from './errors.ts';

/** code_challenge and code_verifier: 43-128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~" (RFC 7636 §4.1, §4.2). */
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

export interface PkceBinding {
  codeChallenge: string | undefined;
  codeChallengeMethod: PkceMethod | undefined;
}

/**
 * The PKCE part of an authorization request. A challenge is required from public clients
 * (RFC 9700 §2.1.1) and from clients that registered a code_challenge_method; a client registered
 * for S256 may not downgrade to plain. The method defaults to the registered one, else plain
 * (RFC 7636 §4.3).
 */
export function checkPkceRequest(client: Client, challenge: string | undefined, method: string | undefined): PkceBinding {
  // PKCE_METHODS is also discovery's code_challenge_methods_supported: what is accepted is what is advertised.
  if (method !== undefined && !(PKCE_METHODS as readonly string[]).includes(method)) throw new InvalidRequest(`code_challenge_method must be ${PKCE_METHODS.join(' or ')}.`);
  if (challenge === undefined) {
    if (client.codeChallengeMethod !== undefined || isPublicClient(client)) throw new InvalidRequest('This client must send a code_challenge (PKCE, RFC 7636).');
    if (method !== undefined) throw new InvalidRequest('code_challenge_method was sent without a code_challenge.');
    return { codeChallenge: undefined, codeChallengeMethod: undefined };
  }
  if (!PKCE_VALUE.test(challenge)) throw new InvalidRequest('code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.');
  const effective: PkceMethod = (method as PkceMethod | undefined) ?? client.codeChallengeMethod ?? 'plain';
  if (client.codeChallengeMethod === 'S256' && effective !== 'S256') throw new InvalidRequest('This client must use code_challenge_method S256.');
  if (effective === 'S256' && challenge.length !== 43) throw new InvalidRequest('An S256 code_challenge is 43 characters of base64url.');
  return { codeChallenge: challenge, codeChallengeMethod: effective };
}

/**
 * The token request's side (RFC 7636 §4.6). A verifier without a bound challenge is refused too:
 * it signals a downgrade attempt (RFC 9700 §4.8.2).
 */
export function verifyPkce(binding: PkceBinding, verifier: string | undefined): void {
  if (verifier !== undefined && !PKCE_VALUE.test(verifier)) throw new InvalidRequest('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.');
  if (binding.codeChallenge === undefined) {
    if (verifier !== undefined) throw new InvalidGrant('A code_verifier was sent but the authorization request had no code_challenge.');
    return;
  }
  if (verifier === undefined) throw new InvalidGrant('The code_verifier is missing.');
  const derived = binding.codeChallengeMethod === 'S256' ? createHash('sha256').update(verifier, 'ascii').digest('base64url') : verifier;
  if (!constantTimeEqual(derived, binding.codeChallenge)) throw new InvalidGrant('The code_verifier does not match the code_challenge.');
}
