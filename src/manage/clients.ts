/**
 * The two clients the management API and its web console stand on (docs/management-api.md):
 *
 * - `gatehouse-manage-api`: the management API as a resource server (RFC 8707). A bearer token is
 *   accepted by the API only when this client_id is among its audiences (src/http/manage-api/auth.ts).
 *   Its resource URI is `<issuer origin>/manage/api/v1`, so a client asks for such a token with
 *   `resource=<that URI>` or with the scope value `gatehouse-manage-api`.
 * - `gatehouse-console`: the web console, a public client (PKCE S256) whose `aud` allows the API.
 *
 * Both derive their URIs from the issuer's origin: the API and the console live at the root of the
 * issuer's host, not under its path. Created idempotently by `gatehouse admin bootstrap`
 * (src/manage/bootstrap.ts) in the same unit of work as the administrator groups.
 */
import type { Config } from '../config.ts';
import type { Client } from '../domain/client.ts';
import type { Clock } from '../lib/clock.ts';
import { parseClientMetadata } from '../oauth/client-metadata.ts';
import type { Store, StoreTransaction } from '../storage/ports.ts';

export const MANAGE_API_CLIENT_ID = 'gatehouse-manage-api';
export const CONSOLE_CLIENT_ID = 'gatehouse-console';
/** Where the API is mounted, at the root of the issuer's host. */
export const MANAGE_API_PATH = '/manage/api/v1';
/** Where the web console is mounted. */
export const CONSOLE_PATH = '/manage/';

/** The clients the API refuses to delete or deactivate: that would lock every administrator out (docs/decisions.md MA5). */
export const PROTECTED_CLIENT_IDS: readonly string[] = [MANAGE_API_CLIENT_ID, CONSOLE_CLIENT_ID];

/** The issuer's origin, `https://sso.example.com` for the issuer `https://sso.example.com/uas`. */
export function issuerOrigin(config: Pick<Config, 'issuer'>): string {
  return new URL(config.issuer).origin;
}

/** The management API's resource URI (RFC 8707 §2): `<origin>/manage/api/v1`. */
export function manageApiResourceUri(config: Pick<Config, 'issuer'>): string {
  return `${issuerOrigin(config)}${MANAGE_API_PATH}`;
}

/** The registrable metadata documents of the two clients, checked like any registration. */
export function managementClientDocuments(config: Pick<Config, 'issuer'>): Record<string, Record<string, unknown>> {
  const origin = issuerOrigin(config);
  return {
    [MANAGE_API_CLIENT_ID]: {
      client_name: 'gatehouse management API',
      resource_server: true,
      resource_uris: [manageApiResourceUri(config)],
      grant_types: [],
    },
    [CONSOLE_CLIENT_ID]: {
      client_name: 'gatehouse console',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      redirect_uris: [`${origin}/manage/callback`],
      post_logout_redirect_uris: [`${origin}${CONSOLE_PATH}`],
      code_challenge_method: 'S256',
      aud: [MANAGE_API_CLIENT_ID],
    },
  };
}

function clientFrom(clientId: string, document: Record<string, unknown>, now: number): Client {
  const { active: _active, authorizationPolicy: _policy, ...settings } = parseClientMetadata(document);
  return { ...settings, clientId, secretHash: undefined, active: true, createdAt: now, updatedAt: now };
}

/**
 * Inserts each of the two clients that does not exist yet, inside the caller's unit of work; the
 * inserts are conditional (a client another bootstrap created meanwhile is left alone). The API's
 * client goes first: the console's `aud` names it. Returns the client_ids created.
 */
export async function ensureManagementClientsIn(tx: Pick<StoreTransaction, 'clients'>, config: Pick<Config, 'issuer'>, now: number): Promise<string[]> {
  const created: string[] = [];
  for (const [clientId, document] of Object.entries(managementClientDocuments(config))) {
    if (await tx.clients.insertIfAbsent(clientFrom(clientId, document, now))) created.push(clientId);
  }
  return created;
}

/** The two clients, created where missing, in one unit of work; the client_ids created. */
export async function ensureManagementClients(deps: { store: Pick<Store, 'transaction'>; clock: Clock }, config: Pick<Config, 'issuer'>): Promise<string[]> {
  const now = deps.clock.now();
  return deps.store.transaction((tx) => ensureManagementClientsIn(tx, config, now));
}
