import { isPublicClient, type Client, type ClientAuthMethod } from '../domain/client.ts';
import type { ClientAuthEndpoint } from '../observability/audit.ts';
import type { ClientStore } from '../storage/ports.ts';
import type { ClientAuthDeps, ClientAuthEndpointContext, ClientAuthMethodHandler, ClientAuthRequest } from './client-auth/method.ts';
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
  /** The methods tried, in order: the registry (src/oauth/client-auth.test.ts passes its own). */
  methods: readonly ClientAuthMethodHandler[] = CLIENT_AUTH_METHODS,
  /**
   * Where the client the credentials name is read, as ClientStore.get reads it: an endpoint passes
   * its own to read the client in the statement that reads what it needs besides (introspection,
   * TokenStore.introspectionRead). Called at most once, and only for a well-formed client_id.
   */
  clients: Pick<ClientStore, 'get'> = deps.store.clients,
): Promise<AuthenticatedClient> {
  const known: { clientId?: string } = {};
  try {
    return await verifyClient(methods, clients, deps.clientAuth, request, { ...CLIENT_AUTH_ENDPOINTS[endpoint.name], url: endpoint.url }, known);
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
 * active, must have registered that method and the endpoint must admit it (`refusal`); the method
 * then verifies the credentials (perhaps asynchronously: a jwks_uri fetch, the jti store).
 * `known.clientId` is set once the client_id names a registered client, so a failure can be
 * counted against it.
 */
async function verifyClient(methods: readonly ClientAuthMethodHandler[], clients: Pick<ClientStore, 'get'>, methodDeps: ClientAuthDeps, request: ClientAuthRequest, endpoint: ClientAuthEndpointContext, known: { clientId?: string }): Promise<AuthenticatedClient> {
  const method = methods.find((candidate) => candidate.detect(request));
  if (!method) throw new InvalidClient('Client authentication is required.', { detail: 'no client credentials' });
  const presented = method.present(request);
  const { usedBasic } = method;
  const client = isLookupKey(presented.clientId, MAX_CREDENTIAL_LENGTH) ? await clients.get(presented.clientId) : undefined;
  if (client) known.clientId = client.clientId;
  if (!client || !client.active) throw new InvalidClient('Client authentication failed.', { usedBasic, detail: client ? 'client is inactive' : 'unknown client_id' });
  const refused = refusal(client, method, endpoint);
  if (refused) throw refused;
  await method.verify(client, presented, endpoint, methodDeps);
  return { client, method: method.method };
}

/**
 * Why `client` may not use `method` at this endpoint, decided here once for every method so that
 * none can forget it: a client uses the method it registered (OIDC Core §9, RFC 7591 §2
 * token_endpoint_auth_method) — one that registered none, either method that presents its secret
 * itself (`secret: 'hashed'`, as secretOf in client-auth/registry.ts says) — and a public
 * client's method is refused where the endpoint needs a confidential caller (RFC 7662 §2.1). The
 * reasons name what went wrong, for the audit event.
 */
function refusal(client: Client, method: ClientAuthMethodHandler, endpoint: ClientAuthEndpointContext): InvalidClient | undefined {
  const registered = client.tokenEndpointAuthMethod;
  const { usedBasic } = method;
  if (registered !== method.method && !(registered === undefined && method.secret === 'hashed')) {
    const detail = method.public
      ? 'confidential client sent no secret'
      : isPublicClient(client) && method.secret === 'hashed'
        ? 'public client sent a secret'
        : `client registered ${registered ?? 'a secret method'} but used ${method.method}`;
    return new InvalidClient('Client authentication failed.', { usedBasic, detail });
  }
  if (method.public && !endpoint.allowPublic) return new InvalidClient('Public clients may not use this endpoint.', { usedBasic, detail: 'public client' });
  return undefined;
}
