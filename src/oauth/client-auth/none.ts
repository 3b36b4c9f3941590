import { InvalidClient } from '../errors.ts';
import { param } from '../params.ts';
import { bodyCredentials } from './body-credentials.ts';
import type { ClientAuthMethodHandler } from './method.ts';

/**
 * `none` (OIDC Core §9): a public client identifies itself by client_id only (RFC 6749 §2.1,
 * §3.2.1). Only a client registered with `none` may, and only where the endpoint admits public clients.
 */
export const none = {
  method: 'none',
  params: ['client_id', 'client_secret'],
  public: true,
  usedBasic: false,
  requires: [],
  signingAlgs: [],
  detect: ({ body }) => param(body, 'client_id') !== undefined && param(body, 'client_secret') === undefined,
  present: ({ body }) => bodyCredentials(body),
  verify(client, _presented, { allowPublic }) {
    if (client.tokenEndpointAuthMethod !== 'none') throw new InvalidClient('Client authentication failed.', { detail: 'confidential client sent no secret' });
    if (!allowPublic) throw new InvalidClient('Public clients may not use this endpoint.', { detail: 'public client' });
  },
} as const satisfies ClientAuthMethodHandler;
