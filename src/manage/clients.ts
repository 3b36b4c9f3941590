/**
 * The use cases of clients registered by administrators (docs/management-api.md, "Clients";
 * docs/cli.md, "Clients"): list, read, export, register, change, replace, rotate the secret,
 * activate or deactivate, delete. Each change takes who acts (acting.ts), runs the rules and the
 * unit of work of src/oauth/client-registration.ts, and emits its audit event after it commits.
 * The CLI and the management API (and through it the console) call these and nothing else.
 *
 * The protected management clients (management-clients.ts, PROTECTED_CLIENT_IDS) are refused
 * deletion and deactivation here, whoever acts (docs/decisions.md MA5, MA5a).
 *
 * Dynamic registration (RFC 7591/7592) is the protocol, not administration: it has its own use
 * cases (src/oauth/dynamic-registration.ts) over the same rules.
 */
import type { Client } from '../domain/client.ts';
import { GENERATED_KEYS } from '../oauth/client-metadata-keys.ts';
import {
  clientView,
  deleteClient,
  getClient,
  listClients,
  registerClient,
  rotateClientSecret,
  setClientActive,
  updateClient,
  type ClientRegistrationDeps,
  type ClientWithSecret,
} from '../oauth/client-registration.ts';
import type { LogoutDelivery, PageQuery } from '../storage/ports.ts';
import type { Acting } from './acting.ts';
import { CONSOLE_CLIENT_ID, MANAGE_API_CLIENT_ID, refuseProtectedClientChange } from './management-clients.ts';
import type { AdministrationPorts } from './ports.ts';

export type { ClientWithSecret } from '../oauth/client-registration.ts';

export interface ClientAdministration {
  /** Every client, by client_id (`gatehouse client list`). */
  list(): Promise<Client[]>;
  /** One keyset page by client_id (the management API's list); `q` searches client_id and client_name. */
  page(query: PageQuery<string>): Promise<Client[]>;
  /** The client; ClientNotFound when none has the client_id. */
  get(clientId: string): Promise<Client>;
  /** The document that registers the same client elsewhere: its metadata with the client_id, no times, no secret. */
  export(clientId: string): Promise<Record<string, unknown>>;
  /** The last attempt at a back-channel logout token for the client, if any (decisions LO13); ClientNotFound when none has the client_id. */
  lastLogoutDelivery(clientId: string): Promise<LogoutDelivery | undefined>;
  /**
   * The two management clients as the store has them (undefined where missing): where the API and
   * the console are, for `gatehouse admin bootstrap`'s answer (docs/decisions.md CO14).
   */
  managementClients(): Promise<{ api: Client | undefined; console: Client | undefined }>;
  /**
   * Registers a client from a metadata document; `options.clientId` keeps an imported client_id,
   * `options.active` overrides the document's `active`. A generated secret is answered once.
   */
  create(acting: Acting, metadata: unknown, options?: { active?: boolean; clientId?: string }): Promise<ClientWithSecret>;
  /** Changes the members given (null removes one); `active: false` on a protected client is refused. */
  update(acting: Acting, clientId: string, patch: Record<string, unknown>): Promise<ClientWithSecret>;
  /**
   * Replaces the whole document (RFC 7592 §2.2 semantics): a member left out is removed, decided
   * against the client as read in the unit of work that writes it.
   */
  replace(acting: Acting, clientId: string, document: Record<string, unknown>): Promise<ClientWithSecret>;
  /** A new secret; the old one stops working at once. */
  rotateSecret(acting: Acting, clientId: string): Promise<{ client: Client; clientSecret: string }>;
  /** Activates or deactivates; deactivating a protected client is refused. */
  setActive(acting: Acting, clientId: string, active: boolean): Promise<Client>;
  /** Deletes for good; a protected client is refused. */
  delete(acting: Acting, clientId: string): Promise<void>;
}

/** The document that registers the same client elsewhere: the metadata view without the generated members but the client_id. */
function exportDocument(client: Client): Record<string, unknown> {
  const view: Record<string, unknown> = clientView(client);
  for (const key of GENERATED_KEYS) if (key !== 'client_id') delete view[key];
  return Object.fromEntries(Object.entries(view).filter(([, value]) => value !== undefined));
}

export function clientAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit' | 'settings'>): ClientAdministration {
  const { store, audit } = ports;
  const registration: ClientRegistrationDeps = {
    clients: store.clients,
    transaction: store.transaction,
    clock: ports.clock,
    random: ports.random,
    keyEncryptionKey: ports.settings.keyEncryptionKey,
    apiClientId: ports.settings.apiClientId,
  };
  const updated = (acting: Acting, client: Client) => audit.emit({ event: 'client.updated', clientId: client.clientId, authorizationPolicy: client.authorizationPolicy ?? null, actor: acting.actor });

  return {
    list: () => listClients(registration),
    page: (query) => store.clients.page(query),
    get: (clientId) => getClient(registration, clientId),
    async export(clientId) {
      return exportDocument(await getClient(registration, clientId));
    },
    async lastLogoutDelivery(clientId) {
      await getClient(registration, clientId);
      return store.logoutDeliveries.get(clientId);
    },
    async managementClients() {
      const [api, console] = await Promise.all([store.clients.get(MANAGE_API_CLIENT_ID), store.clients.get(CONSOLE_CLIENT_ID)]);
      return { api, console };
    },

    async create(acting, metadata, options = {}) {
      const registered = await registerClient(registration, metadata, options);
      audit.emit({ event: 'client.created', clientId: registered.client.clientId, authorizationPolicy: registered.client.authorizationPolicy ?? null, actor: acting.actor });
      return registered;
    },

    async update(acting, clientId, patch) {
      if (patch.active === false) refuseProtectedClientChange(clientId, 'deactivating');
      const result = await updateClient(registration, clientId, patch);
      updated(acting, result.client);
      return result;
    },

    async replace(acting, clientId, document) {
      if (document.active === false) refuseProtectedClientChange(clientId, 'deactivating');
      // The members to remove are those of the client as this unit of work reads it: no other
      // change can slip in between the read and the write.
      const result = await updateClient(registration, clientId, async (current) => ({
        ...Object.fromEntries(Object.keys(exportDocument(current)).filter((key) => key !== 'client_id' && !Object.hasOwn(document, key)).map((key) => [key, null])),
        ...document,
      }));
      updated(acting, result.client);
      return result;
    },

    async rotateSecret(acting, clientId) {
      const result = await rotateClientSecret(registration, clientId);
      audit.emit({ event: 'client.secret_rotated', clientId: result.client.clientId, actor: acting.actor });
      return result;
    },

    async setActive(acting, clientId, active) {
      if (!active) refuseProtectedClientChange(clientId, 'deactivating');
      const client = await setClientActive(registration, clientId, active);
      audit.emit({ event: 'client.status_changed', clientId: client.clientId, active, actor: acting.actor });
      return client;
    },

    async delete(acting, clientId) {
      refuseProtectedClientChange(clientId, 'deleting');
      await deleteClient(registration, clientId);
      audit.emit({ event: 'client.deleted', clientId, actor: acting.actor });
    },
  };
}
