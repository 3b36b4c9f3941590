import type { Client, ClientAuthMethod } from '../domain/client.ts';
import { constantTimeEqual, hashSecret } from '../lib/hash.ts';
import type { ClientAuthEndpoint } from '../observability/audit.ts';
import type { ClientStore } from '../storage/ports.ts';
import { InvalidClient, InvalidRequest, SlowDown } from './errors.ts';
import { isLookupKey } from './lookup-key.ts';
import { param, type RawParams } from './params.ts';
import { clientAuthFailed } from './throttling/client-attempts.ts';
import type { ThrottleDeps } from './throttling/policy.ts';

export interface AuthenticatedClient {
  client: Client;
  method: ClientAuthMethod;
}

/** What a request presents for client authentication, and where it comes from. */
export interface ClientAuthRequest {
  authorization: string | undefined;
  body: RawParams;
  /** The client address (throttling); undefined when unknown. */
  ip?: string | undefined;
}

interface Presented {
  method: ClientAuthMethod;
  clientId: string;
  secret: string | undefined;
}

const MAX_CREDENTIAL_LENGTH = 512;

/**
 * Client authentication under the throttle (src/oauth/throttling/client-attempts.ts): a failure
 * is counted and audited, and answered 429 `slow_down` with Retry-After instead of 401 once the
 * client_id or the address has failed too often. A correct secret is never refused.
 */
export async function authenticateClient(deps: ThrottleDeps, request: ClientAuthRequest, options: { allowPublic: boolean; endpoint: ClientAuthEndpoint }): Promise<AuthenticatedClient> {
  const known: { clientId?: string } = {};
  try {
    return await verifyClient(deps.store.clients, request, options, known);
  } catch (error) {
    if (!(error instanceof InvalidClient)) throw error;
    const { endpoint } = options;
    deps.audit.emit({ event: 'client_auth.failed', endpoint, clientId: known.clientId, reason: error.detail ?? 'malformed credentials', ip: request.ip });
    const retryAfter = await clientAuthFailed(deps, { endpoint, clientId: known.clientId, ip: request.ip });
    if (retryAfter > 0) throw new SlowDown(`Too many failed client authentications; retry in ${retryAfter} s.`, retryAfter, { detail: error.detail });
    throw error;
  }
}

/**
 * The check itself (RFC 6749 §2.3): client_secret_basic (credentials form-urlencoded before
 * base64, §2.3.1), client_secret_post, or `none` for public clients, which identify themselves by
 * client_id only. A client that registered a method must use it (OIDC Core §9); one that
 * registered none may use either secret method. `known.clientId` is set once the client_id names
 * a registered client, so a failure can be counted against it.
 */
async function verifyClient(clients: ClientStore, request: ClientAuthRequest, options: { allowPublic: boolean }, known: { clientId?: string }): Promise<AuthenticatedClient> {
  const presented = presentedCredentials(request.authorization, request.body);
  const usedBasic = presented.method === 'client_secret_basic';
  const client = isLookupKey(presented.clientId, MAX_CREDENTIAL_LENGTH) ? await clients.get(presented.clientId) : undefined;
  if (client) known.clientId = client.clientId;
  if (!client || !client.active) throw new InvalidClient('Client authentication failed.', { usedBasic, detail: client ? 'client is inactive' : 'unknown client_id' });

  const registered = client.tokenEndpointAuthMethod;
  if (presented.method === 'none') {
    if (registered !== 'none') throw new InvalidClient('Client authentication failed.', { detail: 'confidential client sent no secret' });
    if (!options.allowPublic) throw new InvalidClient('Public clients may not use this endpoint.', { detail: 'public client' });
    return { client, method: 'none' };
  }
  if (registered === 'none') throw new InvalidClient('Client authentication failed.', { usedBasic, detail: 'public client sent a secret' });
  if (registered !== undefined && registered !== presented.method) {
    throw new InvalidClient('Client authentication failed.', { usedBasic, detail: `client registered ${registered} but used ${presented.method}` });
  }
  if (!client.secretHash || !constantTimeEqual(hashSecret(presented.secret ?? ''), client.secretHash)) {
    throw new InvalidClient('Client authentication failed.', { usedBasic, detail: 'wrong client_secret' });
  }
  return { client, method: presented.method };
}

function presentedCredentials(authorization: string | undefined, body: RawParams): Presented {
  const bodyId = param(body, 'client_id');
  const bodySecret = param(body, 'client_secret');
  if (authorization !== undefined && /^basic(\s|$)/i.test(authorization)) {
    if (bodySecret !== undefined) throw new InvalidRequest('Use one client authentication method, not both Basic and client_secret.');
    const { clientId, secret } = parseBasic(authorization);
    // Another client's id next to these credentials: the caller is not who it claims (RFC 6749
    // §3.2.1; the OIDF suite accepts only invalid_client or invalid_grant here, conformance AC-11).
    if (bodyId !== undefined && bodyId !== clientId) throw new InvalidClient('client_id in the body differs from the authenticated client.', { usedBasic: true });
    return { method: 'client_secret_basic', clientId, secret };
  }
  if (bodyId === undefined) throw new InvalidClient('Client authentication is required.', { detail: 'no client credentials' });
  if (bodyId.length > MAX_CREDENTIAL_LENGTH || (bodySecret?.length ?? 0) > MAX_CREDENTIAL_LENGTH) throw new InvalidClient('Client authentication failed.');
  return bodySecret === undefined ? { method: 'none', clientId: bodyId, secret: undefined } : { method: 'client_secret_post', clientId: bodyId, secret: bodySecret };
}

/** `Basic base64(urlencode(client_id) ":" urlencode(client_secret))`, RFC 6749 §2.3.1. */
function parseBasic(header: string): { clientId: string; secret: string } {
  const encoded = header.slice(5).trim();
  const malformed = () => new InvalidClient('The Basic authorization header is malformed.', { usedBasic: true });
  if (encoded.length === 0 || encoded.length > 4 * MAX_CREDENTIAL_LENGTH || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw malformed();
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw malformed();
  try {
    return { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw malformed();
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}
