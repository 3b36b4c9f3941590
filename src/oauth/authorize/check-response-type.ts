import type { Client } from '../../domain/client.ts';
import { InvalidRequest, UnauthorizedClient, UnsupportedResponseType } from '../errors.ts';

/** The response types the endpoint serves: discovery's response_types_supported (OIDC Discovery §3). */
export const RESPONSE_TYPES = ['code'] as const;

/**
 * Only the authorization code flow exists (RFC 6749 §3.1.1; no implicit or hybrid flow, RFC 9700
 * §2.1.2), and only for clients whose grant types include authorization_code (§4.1.2.1).
 */
export function checkResponseType(responseType: string | undefined, client: Client): 'code' {
  if (responseType === undefined) throw new InvalidRequest('The response_type parameter is missing.');
  if (!(RESPONSE_TYPES as readonly string[]).includes(responseType)) throw new UnsupportedResponseType('Only response_type=code is supported.');
  if (!client.grantTypes.includes('authorization_code')) throw new UnauthorizedClient('This client may not use the authorization code grant.');
  return 'code';
}
