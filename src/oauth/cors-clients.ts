/**
 * The client an actual CORS response is for (src/http/plugins/cors.ts): the one whose origins may
 * read it (Fetch Standard §3.2). The token and revocation endpoints answer for the client the
 * request names; UserInfo for the client the access token was issued to. Read here so the HTTP
 * layer asks a use case, not the store (issue 23, item 2).
 */
import type { Client } from '../domain/client.ts';
import { hashSecret } from '../lib/hash.ts';
import type { ClientAuthRequest } from './client-auth/method.ts';
import { CLIENT_AUTH_METHODS } from './client-auth/registry.ts';
import type { OAuthDeps } from './deps.ts';
import { MAX_TOKEN_LENGTH } from './issue-tokens.ts';
import { isLookupKey } from './lookup-key.ts';

type ClientReadDeps = Pick<OAuthDeps, 'store'>;

/**
 * The registered client a token or revocation request names, as the client-auth method that
 * recognises the request reads it (client_id, the Basic user name, …): on success, the client that
 * authenticated. Undefined when the request names none or its credentials cannot be read.
 */
export async function clientNamedBy(deps: ClientReadDeps, request: Pick<ClientAuthRequest, 'authorization' | 'body'>): Promise<Client | undefined> {
  const method = CLIENT_AUTH_METHODS.find((candidate) => candidate.detect(request));
  const clientId = method?.present(request).clientId;
  if (clientId === undefined || !isLookupKey(clientId)) return undefined;
  return deps.store.clients.get(clientId);
}

/** The registered client with this client_id, in any state (the answer already said whether it is active). */
export async function registeredClient(deps: ClientReadDeps, clientId: string): Promise<Client | undefined> {
  return deps.store.clients.get(clientId);
}

/**
 * The registered client an access token was issued to, if the token is known, in any state:
 * for a refused UserInfo request (the token unknown, expired, revoked…), whose answer did not
 * read the token's client.
 */
export async function clientOfAccessToken(deps: ClientReadDeps, accessToken: string): Promise<Client | undefined> {
  if (accessToken.length > MAX_TOKEN_LENGTH) return undefined;
  const found = await deps.store.tokens.find(hashSecret(accessToken));
  return found ? deps.store.clients.get(found.clientId) : undefined;
}
