import type { Client, ClientAuthMethod } from '../domain/client.ts';
import type { ClientAuthEndpoint } from '../observability/audit.ts';
import type { ClientStore } from '../storage/ports.ts';
import type { ClientAuthRequest } from './client-auth/method.ts';
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

/**
 * Client authentication under the throttle (src/oauth/throttling/client-attempts.ts): a failure
 * is counted and audited, and answered 429 `slow_down` with Retry-After instead of 401 once the
 * client_id or the address has failed too often. A correct secret is never refused. Whether the
 * endpoint admits public clients is CLIENT_AUTH_ENDPOINTS' (client-auth/registry.ts), which
 * discovery lists too.
 */
export async function authenticateClient(deps: ThrottleDeps, request: ClientAuthRequest, endpoint: ClientAuthEndpoint): Promise<AuthenticatedClient> {
  const known: { clientId?: string } = {};
  try {
    return await verifyClient(deps.store.clients, request, CLIENT_AUTH_ENDPOINTS[endpoint], known);
  } catch (error) {
    if (!(error instanceof InvalidClient)) throw error;
    deps.audit.emit({ event: 'client_auth.failed', endpoint, clientId: known.clientId, reason: error.detail ?? 'malformed credentials', ip: request.ip });
    const retryAfter = await clientAuthFailed(deps, { endpoint, clientId: known.clientId, ip: request.ip });
    if (retryAfter > 0) throw new SlowDown(`Too many failed client authentications; retry in ${retryAfter} s.`, retryAfter, { detail: error.detail });
    throw error;
  }
}

/**
 * The check itself (RFC 6749 §2.3): the first method of the registry (client-auth/registry.ts)
 * that recognises the request reads its credentials; the client they name must exist and be
 * active; the method then verifies them. `known.clientId` is set once the client_id names a
 * registered client, so a failure can be counted against it.
 */
async function verifyClient(clients: ClientStore, request: ClientAuthRequest, options: { allowPublic: boolean }, known: { clientId?: string }): Promise<AuthenticatedClient> {
  const method = CLIENT_AUTH_METHODS.find((candidate) => candidate.detect(request));
  if (!method) throw new InvalidClient('Client authentication is required.', { detail: 'no client credentials' });
  const presented = method.present(request);
  const { usedBasic } = method;
  const client = isLookupKey(presented.clientId, MAX_CREDENTIAL_LENGTH) ? await clients.get(presented.clientId) : undefined;
  if (client) known.clientId = client.clientId;
  if (!client || !client.active) throw new InvalidClient('Client authentication failed.', { usedBasic, detail: client ? 'client is inactive' : 'unknown client_id' });
  method.verify(client, presented, options);
  return { client, method: method.method };
}
