import type { Client } from '../../domain/client.ts';
import { InvalidRequest, UnknownClient } from '../errors.ts';
import type { RawParams } from '../params.ts';
import type { OAuthDeps } from '../deps.ts';
import { isLookupKey } from '../lookup-key.ts';

/**
 * The first check of the authorization endpoint: client_id present, single, and naming an active
 * client. Until it and the redirect_uri pass, errors are shown to the user and never redirected
 * (RFC 6749 §4.1.2.1): the caller lets what is thrown here reach the error page. A missing or
 * repeated client_id is invalid_request; an unknown one invalid_client (docs/decisions.md F5),
 * and an inactive client is reported exactly as an unknown one.
 */
export async function checkClient(deps: Pick<OAuthDeps, 'store'>, raw: RawParams): Promise<Client> {
  const clientId = raw.client_id;
  if (Array.isArray(clientId)) throw new InvalidRequest('The client_id parameter is repeated.');
  if (clientId === undefined || clientId === '') throw new InvalidRequest('The client_id parameter is missing.');
  if (!isLookupKey(clientId)) throw new UnknownClient('The client_id is unknown.');
  const client = await deps.store.clients.get(clientId);
  if (!client || !client.active) throw new UnknownClient('The client_id is unknown.', { detail: `no active client ${JSON.stringify(clientId.slice(0, 100))}` });
  return client;
}
