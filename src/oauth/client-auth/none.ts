import { param } from '../params.ts';
import { bodyCredentials } from './body-credentials.ts';
import type { ClientAuthMethodHandler } from './method.ts';

/**
 * `none` (OIDC Core §9): a public client identifies itself by client_id only (RFC 6749 §2.1,
 * §3.2.1). authenticateClient (client-auth.ts) admits only a client registered with `none`, and
 * only where the endpoint admits public clients; nothing is left to verify.
 */
export const none = {
  method: 'none',
  params: ['client_id', 'client_secret'],
  public: true,
  secret: 'none',
  usedBasic: false,
  requires: [],
  signingAlgs: [],
  detect: ({ body }) => param(body, 'client_id') !== undefined && param(body, 'client_secret') === undefined,
  present: ({ body }) => bodyCredentials(body),
  verify() {},
} as const satisfies ClientAuthMethodHandler;
