/**
 * The client as a metadata document on the wire (snake_case, as Ubisecure's management import and
 * RFC 7591 §2): the inverse of parseClientMetadata (client-metadata.ts), from the same key tables.
 */
import type { Client } from '../domain/client.ts';
import { GENERATED_KEYS, TYPED_KEYS } from './client-metadata-keys.ts';

/**
 * The client as a metadata document: the wire view of `client show` and of registration
 * responses. Never carries the secret or its hash. Absent optional values are left out.
 */
export function clientView(client: Client): Record<string, unknown> {
  const extras = Object.fromEntries(Object.entries(client.metadata).filter(([key]) => !TYPED_KEYS.has(key) && !(GENERATED_KEYS as readonly string[]).includes(key)));
  return {
    client_id: client.clientId,
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    code_challenge_method: client.codeChallengeMethod,
    scope: client.scope,
    refresh_tokens: client.refreshTokens,
    rotate_refresh_tokens: client.rotateRefreshTokens,
    access_token_ttl: client.accessTokenTtl,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    userinfo_signed_response_alg: client.userinfoSignedResponseAlg,
    authorization_policy: client.authorizationPolicy,
    active: client.active,
    created_at: new Date(client.createdAt).toISOString(),
    ...extras,
  };
}
