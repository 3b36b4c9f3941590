/**
 * Dynamic client registration (RFC 7591) and its management protocol (RFC 7592), open only to
 * holders of an initial access token an administrator minted (GATEHOUSE_DYNAMIC_REGISTRATION =
 * initial_access_token; docs/authorization.md, "Dynamic client registration"; decisions DR1–DR9).
 *
 * The metadata rules are registerClient's (client-registration.ts, the CLI's), plus what a client
 * registering itself may not decide (PRIVILEGED_KEYS): who it may act for, who may use it, whether
 * it is active. Tokens are 256-bit random values kept as SHA-256 hashes only (src/lib/hash.ts).
 */
import { isDeepStrictEqual } from 'node:util';
import type { Client } from '../domain/client.ts';
import { constantTimeEqual, hashSecret } from '../lib/hash.ts';
import type { Clock } from '../lib/clock.ts';
import type { Random } from '../lib/random.ts';
import type { InitialAccessToken, RegistrationStore } from '../storage/ports.ts';
import { isKnownMetadataKey } from './client-metadata-keys.ts';
import { ClientNotFound, InvalidClientMetadata, clientView, registerClient, updateClient, type ClientRegistrationDeps } from './client-registration.ts';
import { InvalidClientMetadataError, InvalidRedirectUri, InvalidSoftwareStatement, InvalidToken, type OAuthError } from './errors.ts';
import { isLookupKey } from './lookup-key.ts';
import type { OAuthDeps } from './deps.ts';
import type { Actor, AuditSink } from '../observability/audit.ts';

/** 32 random bytes: 256 bits (RFC 6749 §10.10), like every other token gatehouse issues. */
const TOKEN_BYTES = 32;
/** Most uses one initial access token may have. */
export const MAX_INITIAL_ACCESS_TOKEN_USES = 10_000;
/** Longest an initial access token may live: one year. */
export const MAX_INITIAL_ACCESS_TOKEN_TTL = 365 * 86_400;
const MAX_DESCRIPTION_LENGTH = 200;
/** Most redirect_uris (and post_logout_redirect_uris) a self-registered client may list. */
const MAX_URIS = 100;

/**
 * Metadata a self-registered client may not set (decision DR4): `aud` and the resource-server keys
 * would let it name itself an audience of the management or identity API, or claim a resource
 * URI or scope value (`resource_scopes`: a value another API meant to declare, decision RS1); `authorization_policy` and `active` are the administrator's say over who may use it;
 * `jwks_uri` would make gatehouse fetch any URL the registrant names (server-side request
 * forgery: inline `jwks` is accepted instead). In an RFC 7592 update each may only repeat the
 * value the client has (an administrator may have set it), which the update keeps.
 */
export const PRIVILEGED_KEYS = ['aud', 'resource_server', 'resource_uris', 'resource_scopes', 'access_token_format', 'access_token_signed_response_alg', 'authorization_policy', 'active', 'jwks_uri'] as const;

/** Grants a self-registered client may not register (decision DR5): the password grant hands it users' passwords (RFC 9700 §2.4). */
export const REFUSED_GRANT_TYPES: Record<string, string> = {
  password: 'the password grant is granted by an administrator only (RFC 9700 §2.4): a self-registered client must not see users\' passwords',
};

/** Response members the server sets (RFC 7591 §3.2.1, RFC 7592 §3); RFC 7592 §2.2: an update MUST NOT send the last four. */
const SERVER_KEYS = ['client_id_issued_at', 'client_secret_expires_at', 'registration_access_token', 'registration_client_uri'] as const;

/** Keys this module answers itself, whatever registerClient knows: RFC 7591 §2.3 and RFC 7592 §3. */
const OWN_KEYS: ReadonlySet<string> = new Set(['software_statement', ...SERVER_KEYS]);
/**
 * Metadata gatehouse knows but does not act on, ignored in a self-registration rather than refused
 * (decision DR13): its absence weakens nothing — the login page shows no client, policy or terms
 * links, and `auth_time` is in every ID token anyway — and standard registration tooling sends it.
 * The answer leaves it out, which tells the client it was not registered (RFC 7591 §3.2.1). The
 * CLI, the management API and the console still refuse it, naming the key.
 */
const IGNORED_IN_REGISTRATION: ReadonlySet<string> = new Set(['client_uri', 'policy_uri', 'tos_uri', 'require_auth_time']);

// ---------------------------------------------------------------------------------------------
// Initial access tokens (minted by an administrator: the CLI and the management API)

export interface InitialAccessTokenDeps {
  registrations: RegistrationStore;
  clock: Clock;
  random: Random;
}

/** A bad setting of an initial access token; `field` is its wire name. */
export class InvalidTokenSettings extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'InvalidTokenSettings';
    this.field = field;
  }
}

export interface MintOptions {
  /** Seconds from now, 1..MAX_INITIAL_ACCESS_TOKEN_TTL. */
  expiresIn: number;
  /** 1..MAX_INITIAL_ACCESS_TOKEN_USES. */
  uses: number;
  description?: string | undefined;
  /** `cli:<account>`, or the management API caller. */
  createdBy: string;
}

/** Mints an initial access token; its value is returned here once and never stored (only its hash). */
export async function mintInitialAccessToken(deps: InitialAccessTokenDeps, options: MintOptions): Promise<{ token: InitialAccessToken; value: string }> {
  if (!Number.isInteger(options.expiresIn) || options.expiresIn < 1 || options.expiresIn > MAX_INITIAL_ACCESS_TOKEN_TTL) {
    throw new InvalidTokenSettings('expires_in', `must be a whole number of seconds from 1 to ${MAX_INITIAL_ACCESS_TOKEN_TTL} (one year)`);
  }
  if (!Number.isInteger(options.uses) || options.uses < 1 || options.uses > MAX_INITIAL_ACCESS_TOKEN_USES) {
    throw new InvalidTokenSettings('uses', `must be a whole number from 1 to ${MAX_INITIAL_ACCESS_TOKEN_USES}`);
  }
  const description = options.description?.trim();
  if (description !== undefined && (description.length > MAX_DESCRIPTION_LENGTH || /\p{Cc}/u.test(description))) {
    throw new InvalidTokenSettings('description', `must be at most ${MAX_DESCRIPTION_LENGTH} characters without control characters`);
  }
  const value = deps.random.token(TOKEN_BYTES);
  const now = deps.clock.now();
  const token: InitialAccessToken = {
    id: deps.random.uuid(),
    tokenHash: hashSecret(value),
    description: description === '' ? undefined : description,
    createdBy: options.createdBy,
    createdAt: now,
    expiresAt: now + options.expiresIn * 1000,
    usesLeft: options.uses,
  };
  await deps.registrations.insertInitialAccessToken(token);
  return { token, value };
}

/** The token as the CLI's --json and the management API show it: never its hash. */
export function initialAccessTokenView(token: InitialAccessToken): Record<string, unknown> {
  return {
    id: token.id,
    ...(token.description === undefined ? {} : { description: token.description }),
    expires_at: new Date(token.expiresAt).toISOString(),
    uses_left: token.usesLeft,
    created_at: new Date(token.createdAt).toISOString(),
    created_by: token.createdBy,
  };
}

/** A duration for the CLI: `90` or `90s`, `15m`, `1h`, `7d`; seconds, or undefined when unreadable. */
export function parseDuration(raw: string): number | undefined {
  const match = /^(\d{1,9})([smhd]?)$/.exec(raw.trim());
  if (!match) return undefined;
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

// ---------------------------------------------------------------------------------------------
// RFC 7591 registration and RFC 7592 management

export interface DynamicRegistrationDeps extends ClientRegistrationDeps {
  registrations: RegistrationStore;
  /** Where each change emits its audit event, after its unit of work commits; the actor is the client itself (`via: 'dcr'`). */
  audit: AuditSink;
  /**
   * The server's access-token lifetime (GATEHOUSE_ACCESS_TOKEN_TTL, seconds): a self-registered
   * client may ask for shorter tokens, never longer ones (decision DR11).
   */
  maxAccessTokenTtl: number;
}

/**
 * The registration endpoints' narrow dependencies, made once from the protocol core's by their
 * route group (src/http/public/registration.ts), so that the HTTP layer names no store.
 */
export function dynamicRegistrationDeps(deps: Pick<OAuthDeps, 'store' | 'clock' | 'random' | 'config' | 'audit'>): DynamicRegistrationDeps {
  return {
    audit: deps.audit,
    clients: deps.store.clients,
    registrations: deps.store.registrations,
    transaction: deps.store.transaction,
    clock: deps.clock,
    random: deps.random,
    keyEncryptionKey: deps.config.keyEncryptionKey,
    apiClientId: deps.config.apiClientId,
    maxAccessTokenTtl: deps.config.accessTokenTtl,
  };
}

/** RFC 6750 §3.1: no token at all; the challenge then carries no error attribute. */
export class TokenRequired extends InvalidToken {}

/** The Client Information Response (RFC 7591 §3.2.1 with RFC 7592 §3), and the client it describes. */
export interface ClientInformation {
  client: Client;
  response: Record<string, unknown>;
}

/**
 * RFC 7591 §3: registers a client with an initial access token. The token is checked first (401
 * invalid_token before any metadata error), the metadata next (400), and the token's use is spent
 * in the unit of work that inserts the client and its registration access token, by one
 * conditional write: a registration that fails spends nothing, and concurrent ones never spend
 * more uses than there are. Audited as `client.registered` (naming the spent token and the
 * request's address `ip`) and `client.created`.
 */
export async function registerDynamicClient(
  deps: DynamicRegistrationDeps,
  initialAccessToken: string | undefined,
  body: unknown,
  clientUri: (clientId: string) => string,
  ip: string | undefined,
): Promise<ClientInformation> {
  if (initialAccessToken === undefined) throw new TokenRequired('Registration needs an initial access token (Authorization: Bearer).');
  const tokenHash = hashSecret(initialAccessToken);
  const found = await deps.registrations.findInitialAccessToken(tokenHash);
  const refusal = found === undefined ? 'is not known' : found.expiresAt <= deps.clock.now() ? 'has expired' : found.usesLeft <= 0 ? 'is used up' : undefined;
  if (refusal !== undefined) throw new InvalidToken(`The initial access token ${refusal}.`);

  const clientId = deps.random.uuid();
  const document = registrationDocument(body, undefined, deps.maxAccessTokenTtl, clientId);
  const registrationAccessToken = deps.random.token(TOKEN_BYTES);
  let spent: InitialAccessToken | undefined;
  const { client, clientSecret } = await asRegistrationErrors(() =>
    registerClient(deps, document, {
      clientId,
      inUnitOfWork: async (tx, inserted) => {
        spent = await tx.registrations.useInitialAccessToken(tokenHash, deps.clock.now());
        // Spent or expired by a concurrent registration since the check above: nothing commits.
        if (spent === undefined) throw new InvalidToken('The initial access token is used up or has expired.');
        await tx.registrations.insertRegistrationToken(inserted.clientId, hashSecret(registrationAccessToken), deps.clock.now());
      },
    }),
  );
  const actor = dcr(client.clientId);
  deps.audit.emit({ event: 'client.registered', clientId: client.clientId, initialAccessTokenId: spent!.id, actor, ip });
  deps.audit.emit({ event: 'client.created', clientId: client.clientId, authorizationPolicy: null, actor });
  return { client, response: clientInformation(client, clientSecret, registrationAccessToken, clientUri(client.clientId)) };
}

/** The actor of a registered client's own changes (docs/authorization.md, "Dynamic client registration"). */
function dcr(clientId: string): Actor {
  return { via: 'dcr', clientId };
}

/** RFC 7592 §2.1: the client's registration, for the holder of its registration access token. */
export async function readDynamicClient(deps: Pick<DynamicRegistrationDeps, 'clients' | 'registrations'>, clientId: string, token: string | undefined, clientUri: string): Promise<ClientInformation> {
  await checkRegistrationToken(deps.registrations, clientId, token);
  const client = await deps.clients.get(clientId);
  // RFC 7592 §2.1: a client that does not exist is 401 (its token row is deleted with it anyway).
  if (client === undefined) throw invalidRegistrationToken();
  return { client, response: clientInformation(client, undefined, token!, clientUri) };
}

/**
 * RFC 7592 §2.2: replaces the client's metadata with the request's ("replace, not augment";
 * omitted fields are removed), in one unit of work with the token check. `client_id` must be
 * the client's; `client_secret`, when sent, must be its current secret (it cannot be chosen).
 */
export async function replaceDynamicClient(deps: DynamicRegistrationDeps, clientId: string, token: string | undefined, body: unknown, clientUri: string): Promise<ClientInformation> {
  if (token === undefined) throw new TokenRequired('The client configuration endpoint needs the registration access token (Authorization: Bearer).');
  const { client, clientSecret } = await asRegistrationErrors(() =>
    updateClient(deps, clientId, async (current, tx) => {
      await checkRegistrationToken(tx.registrations, clientId, token);
      return replacement(current, body, deps.maxAccessTokenTtl);
    }),
  );
  deps.audit.emit({ event: 'client.updated', clientId, authorizationPolicy: client.authorizationPolicy ?? null, actor: dcr(clientId) });
  return { client, response: clientInformation(client, clientSecret, token, clientUri) };
}

/** RFC 7592 §2.3: deletes the client (its tokens, consents and registration access token go with it). */
export async function deleteDynamicClient(deps: Pick<DynamicRegistrationDeps, 'transaction' | 'audit'>, clientId: string, token: string | undefined): Promise<void> {
  await deps.transaction(async (tx) => {
    await checkRegistrationToken(tx.registrations, clientId, token);
    if (!(await tx.clients.delete(clientId))) throw invalidRegistrationToken();
  });
  deps.audit.emit({ event: 'client.deleted', clientId, actor: dcr(clientId) });
}

/**
 * The registration access token must be the one of this client: its hash compared with the
 * stored one in constant time, so a token of another client (or none stored: a client the CLI
 * registered) is refused alike, as RFC 6750 §3.1 invalid_token.
 */
async function checkRegistrationToken(registrations: Pick<RegistrationStore, 'registrationTokenHash'>, clientId: string, token: string | undefined): Promise<void> {
  if (token === undefined) throw new TokenRequired('The client configuration endpoint needs the registration access token (Authorization: Bearer).');
  const stored = isLookupKey(clientId, 255) ? await registrations.registrationTokenHash(clientId) : undefined;
  const matches = constantTimeEqual(hashSecret(token), stored ?? '');
  if (stored === undefined || !matches) throw invalidRegistrationToken();
}

function invalidRegistrationToken(): InvalidToken {
  return new InvalidToken('The registration access token is not valid for this client.');
}

/**
 * The registration request as a metadata document for registerClient (RFC 7591 §2), after the
 * rules of self-registration: no software statement, no server-set member, no privileged key
 * (unless it repeats `current`'s value), no refused grant; `consent_required` is always true
 * (decision DR6); `token_endpoint_auth_method` defaults to client_secret_basic (RFC 7591 §2).
 */
function registrationDocument(body: unknown, current: Client | undefined, maxAccessTokenTtl: number, clientId: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidClientMetadataError('The request body must be a JSON object of client metadata (RFC 7591 section 2).');
  // RFC 7591 §2: metadata the server does not understand is ignored (left out of the registration,
  // so the answer shows the client it was not registered); what gatehouse knows but does not
  // implement is still refused by registerClient's rules, naming the key (decision DR10).
  const doc: Record<string, unknown> = Object.fromEntries(Object.entries(body as Record<string, unknown>).filter(([key]) => (isKnownMetadataKey(key) || OWN_KEYS.has(key)) && !IGNORED_IN_REGISTRATION.has(key)));
  if (doc.software_statement !== undefined) throw new InvalidSoftwareStatement('Software statements are not accepted (RFC 7591 section 2.3); send the metadata itself.');
  for (const key of [...SERVER_KEYS, 'client_id', 'client_secret']) {
    if (doc[key] !== undefined) throw new InvalidClientMetadataError(`${key}: is set by the server and cannot be sent${current ? ' in an update (RFC 7592 section 2.2)' : ''}.`);
  }
  const registered = current === undefined ? {} : clientView(current);
  for (const key of PRIVILEGED_KEYS) {
    const value = doc[key];
    if (value === undefined || value === null || (key === 'resource_server' && value === false)) continue;
    if (current !== undefined && isDeepStrictEqual(value, registered[key])) continue;
    throw new InvalidClientMetadataError(`${key}: is set by an administrator only; a dynamically registered client cannot set it.`);
  }
  if (Array.isArray(doc.grant_types)) {
    const refused = doc.grant_types.find((grant): grant is string => typeof grant === 'string' && Object.hasOwn(REFUSED_GRANT_TYPES, grant));
    if (refused !== undefined) throw new InvalidClientMetadataError(`grant_types: "${refused}" is refused: ${REFUSED_GRANT_TYPES[refused]}.`);
  }
  if (doc.consent_required !== undefined && doc.consent_required !== null && doc.consent_required !== true) {
    throw new InvalidClientMetadataError('consent_required: a dynamically registered client always asks users for consent; it must be true or absent.');
  }
  // registerClient bounds every other list; a self-registered client is held to a number of URIs too.
  for (const key of ['redirect_uris', 'post_logout_redirect_uris']) {
    const uris = doc[key];
    if (Array.isArray(uris) && uris.length > MAX_URIS) {
      const message = `${key}: may list at most ${MAX_URIS} URIs.`;
      throw key === 'redirect_uris' ? new InvalidRedirectUri(message) : new InvalidClientMetadataError(message);
    }
  }
  // access_token_ttl is gatehouse's own member (registerClient checks its form): an administrator
  // may make a client's bearer tokens live up to a year; a client registering itself may only
  // shorten them, so an initial access token cannot buy year-long bearer tokens (DR11).
  if (typeof doc.access_token_ttl === 'number' && doc.access_token_ttl > maxAccessTokenTtl) {
    throw new InvalidClientMetadataError(`access_token_ttl: a dynamically registered client may ask for at most the server's lifetime, ${maxAccessTokenTtl} seconds.`);
  }
  doc.consent_required = true;
  doc.token_endpoint_auth_method ??= 'client_secret_basic';
  // RFC 7591 §2: client_name is optional, and without one "the authorization server MAY display
  // the raw client_id value"; gatehouse's clients all have a name, so the client_id becomes it.
  if (doc.client_name === undefined || doc.client_name === null) doc.client_name = clientId;
  // What an administrator decided stays as it is: the update keeps the registered values.
  for (const key of PRIVILEGED_KEYS) delete doc[key];
  return doc;
}

/**
 * RFC 7592 §2.2 as an updateClient patch: every registered key the request leaves out is removed
 * (null), except the privileged ones, which stay as they are; `client_id` must be the client's and
 * `client_secret`, when sent, its current secret.
 */
function replacement(current: Client, body: unknown, maxAccessTokenTtl: number): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidClientMetadataError('The request body must be a JSON object of client metadata (RFC 7591 section 2).');
  const { client_id: clientId, client_secret: clientSecret, ...rest } = body as Record<string, unknown>;
  if (clientId !== current.clientId) throw new InvalidClientMetadataError('client_id: must be sent, and be the client_id of the client being updated (RFC 7592 section 2.2).');
  if (clientSecret !== undefined) {
    const matches = typeof clientSecret === 'string' && current.secretHash !== undefined && constantTimeEqual(hashSecret(clientSecret), current.secretHash);
    if (!matches) throw new InvalidClientMetadataError('client_secret: does not match the current secret; a client cannot choose its secret (RFC 7592 section 2.2).');
  }
  const doc = registrationDocument(rest, current, maxAccessTokenTtl, current.clientId);
  const { client_id: _id, created_at: _created, ...registered } = clientView(current);
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(registered)) {
    if (!(PRIVILEGED_KEYS as readonly string[]).includes(key) && !(key in doc)) patch[key] = null;
  }
  return { ...patch, ...doc };
}

/**
 * RFC 7591 §3.2.1 + RFC 7592 §3: the client's metadata as registered, its client_id, when the id
 * was issued, the secret when one was just generated (never again: only its hash is kept, decision
 * DR3) with `client_secret_expires_at` 0 (it does not expire), and how to manage it. `active` and
 * `created_at` are gatehouse's own view, not RFC 7591 metadata: left out.
 */
function clientInformation(client: Client, clientSecret: string | undefined, registrationAccessToken: string, registrationClientUri: string): Record<string, unknown> {
  const { client_id, created_at: _created, active: _active, ...metadata } = clientView(client);
  const hasSecret = client.secretHash !== undefined;
  return {
    client_id,
    ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    ...(hasSecret ? { client_secret_expires_at: 0 } : {}),
    registration_access_token: registrationAccessToken,
    registration_client_uri: registrationClientUri,
    ...Object.fromEntries(Object.entries(metadata).filter(([, value]) => value !== undefined)),
  };
}

/** registerClient's and updateClient's errors as RFC 7591 §3.2.2 errors; ClientNotFound (deleted meanwhile) as RFC 7592's 401. */
async function asRegistrationErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw registrationError(error);
  }
}

function registrationError(error: unknown): unknown {
  if (error instanceof ClientNotFound) return invalidRegistrationToken();
  if (!(error instanceof InvalidClientMetadata)) return error;
  // The descriptions are JSON, but stay within RFC 6749's error_description characters: quotes become '.
  const description = error.message.replaceAll('"', "'");
  const mapped: OAuthError = error.field === 'redirect_uris' ? new InvalidRedirectUri(description) : new InvalidClientMetadataError(description);
  return mapped;
}
