import { openClientSecret } from '../../crypto/key-encryption.ts';
import { InvalidClient } from '../errors.ts';
import { allowedAlgs, assertionAlg, ASSERTION_PARAMS, isAssertionRequest, presentAssertion, verifyAssertion } from './jwt-assertion.ts';
import type { ClientAuthMethodHandler } from './method.ts';

/** HMAC algorithms accepted (RFC 7518 §3.2). */
const CLIENT_SECRET_JWT_ALGS = ['HS256'] as const;

/**
 * client_secret_jwt (OIDC Core §9, RFC 7523 §2.2): a JWT MACed with the client secret. The secret
 * is kept sealed with GATEHOUSE_KEY_ENCRYPTION_KEY for such clients (docs/decisions.md,
 * "client_secret_jwt secrets are sealed, not hashed"). Recognised by an assertion whose alg is an
 * HMAC one; tried before private_key_jwt, which takes every other assertion.
 */
export const clientSecretJwt = {
  method: 'client_secret_jwt',
  params: ASSERTION_PARAMS,
  public: false,
  secret: 'sealed',
  usedBasic: false,
  requires: ['keyEncryptionKey'],
  signingAlgs: CLIENT_SECRET_JWT_ALGS,
  detect: ({ body }) => isAssertionRequest(body) && assertionAlg(body)?.startsWith('HS') === true,
  present: presentAssertion,
  async verify(client, presented, endpoint, deps) {
    const refuse = (detail: string) => new InvalidClient('Client authentication failed.', { detail });
    if (client.secretSealed === undefined) throw refuse('client_secret_jwt client has no sealed secret');
    if (deps.keyEncryptionKey === undefined) throw refuse('GATEHOUSE_KEY_ENCRYPTION_KEY is not set: client_secret_jwt secrets cannot be opened');
    let secret: string;
    try {
      secret = openClientSecret(client.secretSealed, deps.keyEncryptionKey);
    } catch {
      throw refuse('the sealed client secret does not open with GATEHOUSE_KEY_ENCRYPTION_KEY');
    }
    await verifyAssertion(client, presented, { secret }, allowedAlgs(client, CLIENT_SECRET_JWT_ALGS), endpoint, deps);
  },
} as const satisfies ClientAuthMethodHandler;
