import type { GrantType } from '../domain/client.ts';
import { authenticateClient } from './client-auth.ts';
import type { OAuthDeps } from './deps.ts';
import { InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from './errors.ts';
import { authorizationCodeGrant } from './grants/authorization-code.ts';
import { refreshTokenGrant } from './grants/refresh-token.ts';
import type { TokenResponse } from './issue-tokens.ts';
import { param, rejectRepeated, type RawParams } from './params.ts';

const GRANTS = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
} satisfies Record<GrantType, unknown>;

/** Every parameter the token endpoint reads; none may be repeated (RFC 6749 §3.2). */
const TOKEN_PARAMS = ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'client_id', 'client_secret'];

/** POST /token (RFC 6749 §3.2): authenticate the client, then run the grant it asks for. `ip`: the client address (throttling, audit). */
export async function tokenEndpoint(deps: OAuthDeps, authorization: string | undefined, body: RawParams, ip?: string): Promise<TokenResponse> {
  rejectRepeated(body, TOKEN_PARAMS);
  const grantType = param(body, 'grant_type');
  if (grantType === undefined) throw new InvalidRequest('The grant_type parameter is missing.');
  if (!Object.hasOwn(GRANTS, grantType)) throw new UnsupportedGrantType(`The grant_type ${grantType} is not supported.`);
  const { client } = await authenticateClient(deps, { authorization, body, ip }, { allowPublic: true, endpoint: 'token' });
  const type = grantType as GrantType;
  if (!client.grantTypes.includes(type)) throw new UnauthorizedClient(`This client may not use the ${type} grant.`);
  return GRANTS[type](deps, client, body, ip);
}
