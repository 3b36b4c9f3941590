/**
 * Client registration use cases, as Ubisecure's management does it: an administrator submits a
 * client metadata document; gatehouse generates the client_id and the client_secret, shows the
 * secret once, and stores only its SHA-256 (a 256-bit random secret needs no slow hash).
 */
import type { Clock } from '../lib/clock.ts';
import { sealClientSecret } from '../crypto/key-encryption.ts';
import { hashSecret } from '../lib/hash.ts';
import { isUuid } from '../lib/uuid.ts';
import type { Random } from '../lib/random.ts';
import { ConflictError, MissingReferenceError, type ClientStore, type Store, type StoreTransaction } from '../storage/ports.ts';
import { allowedAudiences, isResourceServer, resourceScopesOf, resourceUrisOf, type Client } from '../domain/client.ts';
import { GENERATED_KEYS } from './client-metadata-keys.ts';
import { InvalidClientMetadata, parseClientMetadata, type ClientSettings } from './client-metadata.ts';
import { clientView } from './client-view.ts';
import { SUPPORTED_SCOPES } from './scope-values.ts';
import { InvalidScope } from './errors.ts';
import { grantedAudiences, grantedScope, parseScope } from './scope.ts';
import { secretOf } from './client-auth/registry.ts';

export { InvalidClientMetadata } from './client-metadata.ts';
export { clientView } from './client-view.ts';

export interface ClientRegistrationDeps {
  clients: ClientStore;
  /** A change reads the client and writes it back in one unit of work, so concurrent changes are not lost. */
  transaction: Store['transaction'];
  clock: Clock;
  random: Random;
  /**
   * GATEHOUSE_KEY_ENCRYPTION_KEY: a client_secret_jwt client's secret is sealed with it (the HMAC
   * of its assertions is keyed by the secret itself). Without it such a client cannot be registered.
   */
  keyEncryptionKey?: string | undefined;
  /**
   * GATEHOUSE_API_CLIENT_ID: the client that stands for the identity API is a resource server
   * whatever its metadata says (docs/identity-api.md), so `aud` may name it on a store whose API
   * client was registered before `resource_server` existed.
   */
  apiClientId?: string | undefined;
}

/** No client has this client_id. */
export class ClientNotFound extends Error {
  readonly clientId: string;
  constructor(clientId: string) {
    super(`no client has the client_id ${JSON.stringify(clientId)}`);
    this.name = 'ClientNotFound';
    this.clientId = clientId;
  }
}

/**
 * The client_id asked for (an import) is a user's id. A client's own token (client_credentials)
 * carries its client_id as `sub`, a user's token the user's id (RFC 9068 §2.2): the two must never
 * meet, or a resource server takes the client for the user (RFC 9068 §5). A user id is compared
 * as gatehouse reads one (src/identity/users.ts getUser): a UUID, in any letter case.
 */
export class ClientIdIsUserId extends Error {
  readonly clientId: string;
  constructor(clientId: string) {
    super(`the client_id ${JSON.stringify(clientId)} is the id of a user: a client's tokens would name that user as their subject (sub)`);
    this.name = 'ClientIdIsUserId';
    this.clientId = clientId;
  }
}

/** A client and, when one was just generated, its secret in the clear: shown once, never stored. */
export interface ClientWithSecret {
  client: Client;
  clientSecret: string | undefined;
}

/** 32 random bytes: 256 bits, base64url without padding, 43 characters (RFC 6749 §10.10). */
const SECRET_BYTES = 32;

/**
 * Registers a client from a metadata document. `options.active` overrides the document's
 * `active`; a client is active unless one of them says otherwise. `options.clientId`: the
 * client_id to keep (an import), instead of a generated one. Public clients
 * (`token_endpoint_auth_method: none`) get no secret.
 */
export async function registerClient(
  deps: ClientRegistrationDeps,
  metadata: unknown,
  options: {
    active?: boolean;
    clientId?: string;
    /**
     * More work in the unit of work that inserts the client, after the insert: it commits with the
     * client or, when it throws, neither does (dynamic registration spends its initial access token here).
     */
    inUnitOfWork?: (tx: StoreTransaction, client: Client) => Promise<void>;
  } = {},
): Promise<ClientWithSecret> {
  const settings = parseClientMetadata(metadata);
  // An imported client keeps its client_id (the management API's import); a taken one is the store's ConflictError.
  const clientId = options.clientId ?? deps.random.uuid();
  const now = deps.clock.now();
  const clientSecret = hasSecret(settings.tokenEndpointAuthMethod) ? deps.random.token(SECRET_BYTES) : undefined;
  const { active, authorizationPolicy, ...typed } = settings;
  const client: Client = {
    ...typed,
    // Only a client with a policy has the member, as the store reads it back.
    ...(authorizationPolicy === undefined ? {} : { authorizationPolicy }),
    clientId,
    ...secretFields(settings.tokenEndpointAuthMethod, clientSecret, deps.keyEncryptionKey),
    active: options.active ?? active ?? true,
    createdAt: now,
    updatedAt: now,
  };
  // One unit of work: the audiences and the scope checked and the resource URIs and scope values
  // claimed with the row that names them; the policy's foreign key refuses an unknown
  // authorization_policy (withKnownPolicy).
  await withKnownPolicy(client, () =>
    withResourceUris(() =>
      deps.transaction(async (tx) => {
        // Read in the unit that inserts: a user created with this id meanwhile (createUser checks
        // the other way round, in its unit) makes one of the two fail, never both succeed.
        if (isUuid(clientId) && (await tx.users.getProfile(clientId.toLowerCase())) !== undefined) throw new ClientIdIsUserId(clientId);
        await checkAudiences(tx.clients, clientId, settings, new Set(), deps.apiClientId);
        await checkResourceUris(tx.clients, client);
        await checkResourceScopes(tx.clients, client);
        await checkScopeHonoured(tx.clients, client, new Set());
        // An imported client_id that a resource server declared as a scope value would make that value two things.
        if (options.clientId !== undefined && (await tx.clients.resourceScopeOwners([clientId])).size > 0) {
          throw new InvalidClientMetadata('client_id', `${JSON.stringify(clientId)} is a scope value a resource server declared (resource_scopes); a client_id cannot be one`);
        }
        await tx.clients.insert(client);
        await options.inUnitOfWork?.(tx, client);
      }),
    ),
  );
  return { client, clientSecret };
}

/**
 * Changes a client: `patch` is a partial metadata document whose keys replace the registered
 * ones (null removes a key, restoring its default); the result is validated as a whole. A client
 * that turns public loses its secret; one that stops being public gets a new one, returned here.
 */
export async function updateClient(
  deps: ClientRegistrationDeps,
  clientId: string,
  /** Or made from the client as read in the unit of work (dynamic registration checks its token and the echoed keys there). */
  patch: Record<string, unknown> | ((current: Client, tx: StoreTransaction) => Promise<Record<string, unknown>>),
): Promise<ClientWithSecret> {
  return withResourceUris(() => deps.transaction(async (tx) => {
    const current = await getClient(tx, clientId);
    const changes = typeof patch === 'function' ? await patch(current, tx) : patch;
    const { client_id: _id, created_at: _created, ...registered } = clientView(current);
    const settings = parseClientMetadata({ ...registered, ...withoutEchoedKeys(current, changes) });
    await checkAudiences(tx.clients, clientId, settings, allowedAudiences(current), deps.apiClientId);
    const method = settings.tokenEndpointAuthMethod;
    const hadSecret = hasSecret(current.tokenEndpointAuthMethod) && current.secretHash !== undefined;
    // A client gets a new secret when it starts needing one, or when it turns to a method whose
    // secret is sealed (client_secret_jwt: only a sealed secret can check an HMAC, and the old one
    // was kept as a hash only).
    const newSecret = hasSecret(method) && (!hadSecret || (secretOf(method) === 'sealed' && current.secretSealed === undefined));
    const clientSecret = newSecret ? deps.random.token(SECRET_BYTES) : undefined;
    const client: Client = {
      ...current,
      ...typedPart(settings),
      active: settings.active ?? current.active,
      ...(newSecret
        ? secretFields(method, clientSecret, deps.keyEncryptionKey)
        : hasSecret(method)
          ? { secretHash: current.secretHash, secretSealed: secretOf(method) === 'sealed' ? current.secretSealed : undefined }
          : { secretHash: undefined, secretSealed: undefined }),
      updatedAt: deps.clock.now(),
    };
    await checkResourceUris(tx.clients, client);
    await checkResourceScopes(tx.clients, client);
    await checkScopeHonoured(tx.clients, client, new Set(parseScope(current.scope)));
    if (settings.authorizationPolicy === undefined) delete client.authorizationPolicy;
    await withKnownPolicy(client, () => replace(tx, client));
    return { client, clientSecret };
  }));
}

/**
 * A write of a client whose `authorization_policy` names no stored policy: the store's foreign key
 * refuses it (also when the policy is deleted at the same moment, migration 012), and the
 * administrator is told which key is wrong.
 */
async function withKnownPolicy<T>(client: Client, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof MissingReferenceError && client.authorizationPolicy !== undefined) {
      throw new InvalidClientMetadata('authorization_policy', `no policy is named ${JSON.stringify(client.authorizationPolicy)} (gatehouse policy list)`);
    }
    throw error;
  }
}

/** Replaces a confidential client's secret; the old one stops working at once. */
export async function rotateClientSecret(deps: ClientRegistrationDeps, clientId: string): Promise<{ client: Client; clientSecret: string }> {
  return deps.transaction(async (tx) => {
    const current = await getClient(tx, clientId);
    if (!hasSecret(current.tokenEndpointAuthMethod)) throw new InvalidClientMetadata('token_endpoint_auth_method', `the client uses ${current.tokenEndpointAuthMethod} and has no secret`);
    const clientSecret = deps.random.token(SECRET_BYTES);
    const client: Client = { ...current, ...secretFields(current.tokenEndpointAuthMethod, clientSecret, deps.keyEncryptionKey), updatedAt: deps.clock.now() };
    await replace(tx, client);
    return { client, clientSecret };
  });
}

/** Activates or deactivates a client; an inactive client is refused at every endpoint. */
export async function setClientActive(deps: Pick<ClientRegistrationDeps, 'transaction' | 'clock'>, clientId: string, active: boolean): Promise<Client> {
  return deps.transaction(async (tx) => {
    const client: Client = { ...(await getClient(tx, clientId)), active, updatedAt: deps.clock.now() };
    await replace(tx, client);
    return client;
  });
}

/** Whether a client of this method holds a secret: its handler says (`secret`; not a public client, not one proving itself with its private key). */
function hasSecret(method: Client['tokenEndpointAuthMethod']): boolean {
  return secretOf(method) !== 'none';
}

/**
 * How a new secret is kept: its SHA-256 always (the secret methods compare against it); sealed
 * with GATEHOUSE_KEY_ENCRYPTION_KEY as well for a method whose secret is `sealed`
 * (client_secret_jwt, whose assertions are HMACs keyed by the secret itself) (docs/decisions.md, "client_secret_jwt secrets are sealed, not hashed").
 */
function secretFields(method: Client['tokenEndpointAuthMethod'], clientSecret: string | undefined, keyEncryptionKey: string | undefined): Pick<Client, 'secretHash' | 'secretSealed'> {
  if (clientSecret === undefined) return { secretHash: undefined, secretSealed: undefined };
  if (secretOf(method) !== 'sealed') return { secretHash: hashSecret(clientSecret), secretSealed: undefined };
  if (keyEncryptionKey === undefined) {
    throw new InvalidClientMetadata('token_endpoint_auth_method', `${method} needs GATEHOUSE_KEY_ENCRYPTION_KEY set: its secret is kept encrypted with it, since an HMAC cannot be checked against a hash of its key`);
  }
  return { secretHash: hashSecret(clientSecret), secretSealed: sealClientSecret(clientSecret, keyEncryptionKey) };
}

/** Writes back a client read in the same unit of work. */
async function replace(tx: Pick<StoreTransaction, 'clients'>, client: Client): Promise<void> {
  if (!(await tx.clients.update(client))) throw new ClientNotFound(client.clientId);
}

export async function deleteClient(deps: Pick<ClientRegistrationDeps, 'clients'>, clientId: string): Promise<void> {
  if (!(await deps.clients.delete(clientId))) throw new ClientNotFound(clientId);
}

export async function getClient(deps: Pick<ClientRegistrationDeps, 'clients'>, clientId: string): Promise<Client> {
  const client = await deps.clients.get(clientId);
  if (!client) throw new ClientNotFound(clientId);
  return client;
}

export async function listClients(deps: Pick<ClientRegistrationDeps, 'clients'>): Promise<Client[]> {
  return deps.clients.list();
}

/**
 * Every client_id newly in `aud` must name a registered resource server other than this one
 * (docs/decisions.md RI2): a typo, a client naming itself, or an ordinary client would otherwise be
 * stored as an allow-list that allows nothing a resource server could check. The identity API's
 * client (`apiClientId`) counts as a resource server. Entries the client already had are not looked
 * up again, so deleting a client, or an entry stored before resource servers existed, does not block
 * unrelated updates (RI3: such entries keep working). Run in the unit of work that writes the
 * client; an audience is in any case granted only while it is a registered, active client
 * (src/oauth/scope.ts), and client_ids are random UUIDs that are never handed out again.
 */
async function checkAudiences(clients: ClientStore, clientId: string, settings: ClientSettings, alreadyAllowed: ReadonlySet<string>, apiClientId: string | undefined): Promise<void> {
  const aud = settings.metadata.aud as string[] | undefined;
  if (aud === undefined) return;
  if (aud.includes(clientId)) throw new InvalidClientMetadata('aud', `${JSON.stringify(clientId)} is this client's own client_id; a client cannot be its own audience`);
  const added = aud.filter((id) => !alreadyAllowed.has(id));
  const found = await Promise.all(added.map((id) => clients.get(id)));
  const unknown = added.find((_, i) => found[i] === undefined);
  if (unknown !== undefined) throw new InvalidClientMetadata('aud', `${JSON.stringify(unknown)} is not the client_id of a registered client`);
  const notServer = added.find((id, i) => id !== apiClientId && !isResourceServer(found[i]!));
  if (notServer !== undefined) throw new InvalidClientMetadata('aud', `${JSON.stringify(notServer)} is not a resource server; register it with resource_server: true (gatehouse client update ${notServer} --resource-server)`);
  const inactive = added.find((_, i) => !found[i]!.active);
  if (inactive !== undefined) throw new InvalidClientMetadata('aud', `${JSON.stringify(inactive)} is an inactive client; activate it first`);
}

/**
 * Each of the client's `resource_uris` must be free or its own (RFC 8707 §2 maps a resource to one
 * resource server). Read in the unit of work, to name the URI and its holder; the store's primary
 * key (migration 014) is what keeps the rule when two registrations race (withResourceUris).
 */
async function checkResourceUris(clients: ClientStore, client: Client): Promise<void> {
  for (const uri of resourceUrisOf(client)) {
    const holder = await clients.findByResourceUri(uri);
    if (holder !== undefined && holder.clientId !== client.clientId) {
      throw new InvalidClientMetadata('resource_uris', `${JSON.stringify(uri)} is already a resource URI of the client ${holder.clientId}`);
    }
  }
}

/**
 * Each of the client's declared `resource_scopes` must be free or its own, so that a scope value
 * names one audience (docs/decisions.md RS1), and no client's client_id (this one's included),
 * which already asks for that client as the audience. Read in the unit of work, to name the value
 * and its holder; the store's primary key (migration 019) is what keeps the first rule when two
 * registrations race (withResourceUris), and the unit of work the second.
 */
async function checkResourceScopes(clients: ClientStore, client: Client): Promise<void> {
  const declared = resourceScopesOf(client);
  if (declared.length === 0) return;
  const owners = await clients.resourceScopeOwners(declared);
  const taken = declared.find((value) => owners.has(value) && owners.get(value) !== client.clientId);
  if (taken !== undefined) throw new InvalidClientMetadata('resource_scopes', `${JSON.stringify(taken)} is already a scope value of the resource server ${owners.get(taken)!}; a scope value names one resource server`);
  const clientIds = await Promise.all(declared.map((value) => (value === client.clientId ? client : clients.get(value))));
  const id = declared.find((_, i) => clientIds[i] !== undefined);
  if (id !== undefined) throw new InvalidClientMetadata('resource_scopes', `${JSON.stringify(id)} is a client_id, which as a scope value already asks for that client as the audience`);
}

/**
 * Registration accepts a `scope` only when the grants honour each of its values (docs/decisions.md
 * RS4): a supported OpenID Connect value, or one grantedAudiences (scope.ts, the grants' own rule)
 * grants this client — a resource server's client_id or declared value, the server in the
 * client's `aud` and active. A value the grants would drop (`offline_access`, a typo) or refuse
 * would otherwise be stored as a promise nobody keeps. Values the client already had are not
 * checked again, so a client stored before the rule, or one whose resource server has since
 * changed, can still be updated (its other values keep working; the grants ignore or refuse the rest).
 */
async function checkScopeHonoured(clients: ClientStore, client: Client, alreadyRegistered: ReadonlySet<string>): Promise<void> {
  const added = parseScope(client.scope).filter((value) => !alreadyRegistered.has(value));
  let granted: Set<string>;
  try {
    granted = await grantedAudiences(clients, client, added);
  } catch (error) {
    if (error instanceof InvalidScope) throw new InvalidClientMetadata('scope', error.message);
    throw error;
  }
  const unknown = added.find((value) => !granted.has(value) && grantedScope([value], client).length === 0);
  if (unknown !== undefined) {
    throw new InvalidClientMetadata('scope', `${JSON.stringify(unknown)} is not a scope value gatehouse grants: use ${SUPPORTED_SCOPES.join(', ')}, the client_id of a resource server in aud, or a scope value one declared (resource_scopes)`);
  }
}

/** A resource URI or scope value taken by a concurrent registration surfaces as the store's ConflictError: said as the metadata error it is. */
async function withResourceUris<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ConflictError && /resource URI/.test(error.message)) {
      throw new InvalidClientMetadata('resource_uris', 'a URI was registered by another client at the same time; each resource URI belongs to one resource server');
    }
    if (error instanceof ConflictError && /resource scope/.test(error.message)) {
      throw new InvalidClientMetadata('resource_scopes', 'a scope value was declared by another resource server at the same time; each scope value belongs to one resource server');
    }
    throw error;
  }
}

function typedPart(settings: ClientSettings): Omit<ClientSettings, 'active'> {
  const { active: _active, ...typed } = settings;
  return typed;
}

/**
 * Generated keys may appear in an update when they repeat the client's own values (a document
 * from `client show --json` fed back); any other value for them is an error.
 */
function withoutEchoedKeys(current: Client, patch: Record<string, unknown>): Record<string, unknown> {
  const view = clientView(current);
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) {
    if (!(GENERATED_KEYS as readonly string[]).includes(key)) rest[key] = value;
    else if (value !== view[key]) throw new InvalidClientMetadata(key, 'is generated by gatehouse and cannot be changed');
  }
  return rest;
}
