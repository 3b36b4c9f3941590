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
 * (src/manage/bootstrap.ts) in the same unit of work as the administrator groups, from whatever
 * issuer the CLI was given; the server then puts its own issuer's URIs into them when it starts,
 * and again when the console finds them different (`alignManagementClients`), so the console
 * works wherever the server runs (docs/decisions.md CO14).
 */
import type { Config } from '../config.ts';
import type { Client } from '../domain/client.ts';
import { ConflictError, ProtectedClientError } from '../domain/errors.ts';
import type { Clock } from '../lib/clock.ts';
import { parseClientMetadata } from '../oauth/client-metadata.ts';
import type { Store, StoreTransaction } from '../storage/ports.ts';

export const MANAGE_API_CLIENT_ID = 'gatehouse-manage-api';
export const CONSOLE_CLIENT_ID = 'gatehouse-console';
/**
 * Where the API is mounted, at the root of the issuer's host. The one definition: the API's
 * plugin mounts it here and the console, a client of the API, calls it here.
 */
export const MANAGE_API_PATH = '/manage/api/v1';
/**
 * Where the web console is mounted (its pages are below `/manage/`), and the Path its cookies
 * are scoped to (RFC 6265 §5.2.4). The one definition: the console's plugin, its pages and
 * the console client's registered URIs read it.
 */
export const CONSOLE_PATH = '/manage';

/**
 * The clients nobody may delete or deactivate, whoever acts and through whichever front end: that
 * would lock every administrator out of the management API and the console (docs/decisions.md
 * MA5, MA5a). `gatehouse admin bootstrap` creates them where missing; nothing needs them gone.
 */
export const PROTECTED_CLIENT_IDS: readonly string[] = [MANAGE_API_CLIENT_ID, CONSOLE_CLIENT_ID];

/**
 * Refuses deleting or deactivating a protected client with ProtectedClientError, one message for
 * every front end. Decided by the client_id alone, before the unit of work: a protected client is
 * refused whether or not it exists (before the bootstrap, or already inactive).
 */
export function refuseProtectedClientChange(clientId: string, change: 'deleting' | 'deactivating'): void {
  if (!PROTECTED_CLIENT_IDS.includes(clientId)) return;
  const which = clientId === MANAGE_API_CLIENT_ID ? "the management API's own client" : "the web console's client";
  throw new ProtectedClientError(clientId, `${clientId} is ${which}: ${change} it would lock every administrator out.`);
}

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
      redirect_uris: [`${origin}${CONSOLE_PATH}/callback`],
      post_logout_redirect_uris: [`${origin}${CONSOLE_PATH}/`],
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

/**
 * The parts of the two clients' registrations that follow from the issuer: the console's redirect
 * URI and post-logout redirect URI, the API's resource URI. Each is exactly the one URI of this
 * issuer: a URI of another origin left beside it (the default `http://127.0.0.1:8080` of a
 * bootstrap run without the server's settings) would hand the console's codes to whatever listens
 * there (issue 22 item 2).
 */
function issuerFields(clientId: string, config: Pick<Config, 'issuer'>): { redirectUris?: string[]; postLogoutRedirectUris?: string[]; resourceUris?: string[] } {
  const origin = issuerOrigin(config);
  if (clientId === CONSOLE_CLIENT_ID) return { redirectUris: [`${origin}${CONSOLE_PATH}/callback`], postLogoutRedirectUris: [`${origin}${CONSOLE_PATH}/`] };
  return { resourceUris: [manageApiResourceUri(config)] };
}

const sameList = (a: readonly unknown[] | undefined, b: readonly string[]) => a !== undefined && a.length === b.length && a.every((item, i) => item === b[i]);

/**
 * The client with this issuer's URIs put in (everything else — name, policy, active, aud — as the
 * administrator left it), or undefined when it has them already.
 */
export function alignedWithIssuer(client: Client, config: Pick<Config, 'issuer'>, now: number): Client | undefined {
  const wanted = issuerFields(client.clientId, config);
  const redirectUris = wanted.redirectUris !== undefined && !sameList(client.redirectUris, wanted.redirectUris) ? wanted.redirectUris : undefined;
  const postLogoutRedirectUris = wanted.postLogoutRedirectUris !== undefined && !sameList(client.postLogoutRedirectUris, wanted.postLogoutRedirectUris) ? wanted.postLogoutRedirectUris : undefined;
  const current = client.metadata.resource_uris;
  const resourceUris = wanted.resourceUris !== undefined && !sameList(Array.isArray(current) ? current : undefined, wanted.resourceUris) ? wanted.resourceUris : undefined;
  if (redirectUris === undefined && postLogoutRedirectUris === undefined && resourceUris === undefined) return undefined;
  return {
    ...client,
    ...(redirectUris ? { redirectUris } : {}),
    ...(postLogoutRedirectUris ? { postLogoutRedirectUris } : {}),
    ...(resourceUris ? { metadata: { ...client.metadata, resource_uris: resourceUris } } : {}),
    updatedAt: now,
  };
}

/** The management client_ids, the API's first (the console's `aud` names it). */
const MANAGEMENT_CLIENT_IDS = [MANAGE_API_CLIENT_ID, CONSOLE_CLIENT_ID] as const;

/**
 * Puts this server's issuer into the registrations of the two clients where they exist and hold
 * another (issuerFields), in ONE unit of work; a client that does not exist is left to `gatehouse
 * admin bootstrap`. Idempotent: a second run finds nothing to change. Several instances running it
 * at once (start-up, or consoles opened together) are serialised by the unit of work (SERIALIZABLE
 * on PostgreSQL, retried from the start), so the later ones find the URIs in place and change
 * nothing. Returns the client_ids changed. A resource URI another client holds is a ConflictError.
 */
export async function alignManagementClients(deps: { store: Pick<Store, 'transaction'>; clock: Clock }, config: Pick<Config, 'issuer'>): Promise<string[]> {
  return deps.store.transaction(async (tx) => {
    const now = deps.clock.now();
    const changed: string[] = [];
    for (const clientId of MANAGEMENT_CLIENT_IDS) {
      const client = await tx.clients.get(clientId);
      const aligned = client && alignedWithIssuer(client, config, now);
      if (aligned && (await tx.clients.update(aligned))) changed.push(clientId);
    }
    return changed;
  });
}

/**
 * Whether the console can sign in, for the console's sign-in page: `ready` when its client exists
 * and is active. When it (or the API's client) names another origin than this server's issuer — a
 * bootstrap run without the server's settings while the server was running — this server's URIs
 * are put in first (alignManagementClients; docs/decisions.md CO14): `aligned` lists the clients
 * changed, and `conflict` says they could not be because another client holds the API's resource
 * URI (the sign-in then shows the refusal's description).
 */
export async function prepareConsoleClient(
  deps: { store: Pick<Store, 'clients' | 'transaction'>; clock: Clock },
  config: Pick<Config, 'issuer'>,
): Promise<{ ready: false } | { ready: true; aligned: string[]; conflict?: ConflictError }> {
  const [client, api] = await Promise.all([deps.store.clients.get(CONSOLE_CLIENT_ID), deps.store.clients.get(MANAGE_API_CLIENT_ID)]);
  if (client === undefined || !client.active) return { ready: false };
  const now = deps.clock.now();
  if (alignedWithIssuer(client, config, now) === undefined && (api === undefined || alignedWithIssuer(api, config, now) === undefined)) return { ready: true, aligned: [] };
  try {
    return { ready: true, aligned: await alignManagementClients(deps, config) };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    return { ready: true, aligned: [], conflict: error };
  }
}

/** The two clients, created where missing, in one unit of work; the client_ids created. */
export async function ensureManagementClients(deps: { store: Pick<Store, 'transaction'>; clock: Clock }, config: Pick<Config, 'issuer'>): Promise<string[]> {
  const now = deps.clock.now();
  return deps.store.transaction((tx) => ensureManagementClientsIn(tx, config, now));
}
