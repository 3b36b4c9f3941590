/**
 * The two forms of access token gatehouse issues (ACCESS_TOKEN_FORMATS, src/protocol/constants.ts),
 * and what a client registered about them as a resource server: `access_token_format` and `access_token_signed_response_alg` (client metadata,
 * validated in client-metadata.ts). Which form a token takes is decided in jwt-access-token.ts.
 */
import type { Client } from '../domain/client.ts';
import { ACCESS_TOKEN_FORMATS, isSigningAlg, type AccessTokenFormat, type SigningAlg } from '../protocol/constants.ts';

/** The format a client registered for the tokens meant for it; undefined when it registered none (or a stored value is malformed). */
export function accessTokenFormatOf(client: Pick<Client, 'metadata'>): AccessTokenFormat | undefined {
  const value = client.metadata.access_token_format;
  return (ACCESS_TOKEN_FORMATS as readonly unknown[]).includes(value) ? (value as AccessTokenFormat) : undefined;
}

/** The algorithm a client registered for the JWT access tokens meant for it; undefined when none (or malformed). */
export function accessTokenAlgOf(client: Pick<Client, 'metadata'>): SigningAlg | undefined {
  const value = client.metadata.access_token_signed_response_alg;
  return isSigningAlg(value) ? value : undefined;
}
