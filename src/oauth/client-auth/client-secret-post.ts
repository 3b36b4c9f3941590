import { param } from '../params.ts';
import { bodyCredentials } from './body-credentials.ts';
import { refuseAssertionBeside } from './jwt-assertion.ts';
import type { ClientAuthMethodHandler } from './method.ts';
import { verifySecret } from './secret.ts';

/** client_secret_post (RFC 6749 §2.3.1): client_id and client_secret in the form body. */
export const clientSecretPost = {
  method: 'client_secret_post',
  params: ['client_id', 'client_secret', 'client_assertion', 'client_assertion_type'],
  public: false,
  secret: 'hashed',
  usedBasic: false,
  requires: [],
  signingAlgs: [],
  detect: ({ body }) => param(body, 'client_secret') !== undefined,
  present({ body }) {
    refuseAssertionBeside(body, 'client_secret');
    return bodyCredentials(body);
  },
  verify: (client, presented) => verifySecret(client, presented, false),
} as const satisfies ClientAuthMethodHandler;
