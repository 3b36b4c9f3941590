import { authenticateClient } from './client-auth.ts';
import { CLIENT_AUTH_PARAMS } from './client-auth/registry.ts';
import type { OAuthDeps } from './deps.ts';
import { isPublicClient } from '../domain/client.ts';
import { InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from './errors.ts';
import { GRANT_PARAMS, grantFor } from './grants/registry.ts';
import type { TokenResponse } from './issue-tokens.ts';
import { param, rejectRepeated, type RawParams } from './params.ts';

/**
 * Every parameter the token endpoint reads: grant_type, those the grants declare and those the
 * client-auth methods declare. None may be repeated (RFC 6749 §3.2).
 */
export const TOKEN_PARAMS: readonly string[] = [...new Set(['grant_type', ...GRANT_PARAMS, ...CLIENT_AUTH_PARAMS])];

/** POST /token (RFC 6749 §3.2): authenticate the client, then run the grant it asks for (grants/registry.ts). `ip`: the client address (throttling, audit). */
export async function tokenEndpoint(deps: OAuthDeps, authorization: string | undefined, body: RawParams, ip?: string): Promise<TokenResponse> {
  rejectRepeated(body, TOKEN_PARAMS);
  const grantType = param(body, 'grant_type');
  if (grantType === undefined) throw new InvalidRequest('The grant_type parameter is missing.');
  const grant = grantFor(grantType);
  if (!grant) throw new UnsupportedGrantType(`The grant_type ${grantType} is not supported.`);
  const { client } = await authenticateClient(deps, { authorization, body, ip }, 'token');
  if (!client.grantTypes.includes(grant.type)) throw new UnauthorizedClient(`This client may not use the ${grant.type} grant.`);
  // Registration refuses the combination; a row stored otherwise is refused here all the same.
  if (grant.confidential === true && isPublicClient(client)) throw new UnauthorizedClient(`The ${grant.type} grant is for confidential clients only.`);
  return grant.handle(deps, client, body, ip);
}
