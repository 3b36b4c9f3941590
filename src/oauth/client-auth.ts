import type { Client, ClientAuthMethod } from '../domain/client.ts';
import type { ClientAuthEndpoint } from '../observability/audit.ts';
import type { ClientStore } from '../storage/ports.ts';
import type { ClientAuthDeps, ClientAuthEndpointContext, ClientAuthRequest } from './client-auth/method.ts';
import { MAX_CREDENTIAL_LENGTH } from './client-auth/method.ts';
import { CLIENT_AUTH_ENDPOINTS, CLIENT_AUTH_METHODS } from './client-auth/registry.ts';
import { InvalidClient, SlowDown } from './errors.ts';
import { isLookupKey } from './lookup-key.ts';
import { clientAuthFailed } from './throttling/client-attempts.ts';
import type { ThrottleDeps } from './throttling/policy.ts';

export type { ClientAuthRequest } from './client-auth/method.ts';

export interface AuthenticatedClient {
  client: Client;
  method: ClientAuthMethod;
}

/** The endpoint authenticating: its name (throttling, audit, whether it admits public clients) and its own URL (an assertion's aud). */
export interface AuthenticatingEndpoint {
  name: ClientAuthEndpoint;
  url: string;
}

/**
 * Client authentication under the throttle (src/oauth/throttling/client-attempts.ts): a failure
 * is counted and audited, and answered 429 `slow_down` with Retry-After instead of 401 once the
 * client_id or the address has failed too often. A correct credential is never refused. Whether the
 * endpoint admits public clients is CLIENT_AUTH_ENDPOINTS' (client-auth/registry.ts), which
 * discovery lists too. Each endpoint passes its own URL: a client assertion may name it as its
 * `aud` (RFC 7523 §3 item 3).
 */
export async function authenticateClient(
  deps: ThrottleDeps & { store: { clients: ClientStore }; clientAuth: ClientAuthDeps },
  request: ClientAuthRequest,
  endpoint: AuthenticatingEndpoint,
): Promise<AuthenticatedClient> {
  const known: { clientId?: string } = {};
  try {
    return await verifyClient(deps.store.clients, deps.clientAuth, request, { ...CLIENT_AUTH_ENDPOINTS[endpoint.name], url: endpoint.url }, known);
  } catch (error) {
    if (!(error instanceof InvalidClient)) throw error;
    deps.audit.emit({ event: 'client_auth.failed', endpoint: endpoint.name, clientId: known.clientId, reason: error.detail ?? 'malformed credentials', ip: request.ip });
    const retryAfter = await clientAuthFailed(deps, { endpoint: endpoint.name, clientId: known.clientId, ip: request.ip });
    if (retryAfter > 0) throw new SlowDown(`Too many failed client authentications; retry in ${retryAfter} s.`, retryAfter, { detail: error.detail });
    throw error;
  }
}

/**
 * The check itself (RFC 6749 §2.3): the first method of the registry (client-auth/registry.ts)
 * that recognises the request reads its credentials; the client they name must exist and be
 * active; the method then verifies them (perhaps asynchronously: a jwks_uri fetch, the jti
 * store). `known.clientId` is set once the client_id names a registered client, so a failure can
 * be counted against it.
 */
async function verifyClient(clients: ClientStore, methodDeps: ClientAuthDeps, request: ClientAuthRequest, endpoint: ClientAuthEndpointContext, known: { clientId?: string }): Promise<AuthenticatedClient> {
  const method = CLIENT_AUTH_METHODS.find((candidate) => candidate.detect(request));
  if (!method) throw new InvalidClient('Client authentication is required.', { detail: 'no client credentials' });
  const presented = method.present(request);
  const { usedBasic } = method;
  const client = isLookupKey(presented.clientId, MAX_CREDENTIAL_LENGTH) ? await clients.get(presented.clientId) : undefined;
  if (client) known.clientId = client.clientId;
  if (!client || !client.active) throw new InvalidClient('Client authentication failed.', { usedBasic, detail: client ? 'client is inactive' : 'unknown client_id' });
  await method.verify(client, presented, endpoint, methodDeps);
  return { client, method: method.method };
}
