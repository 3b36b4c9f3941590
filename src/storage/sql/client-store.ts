import { sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import { DEFAULT_SIGNING_ALG, isSigningAlg, type SigningAlg } from '../../protocol/constants.ts';
import { resourceScopesOf, resourceUrisOf, type Client, type ClientAuthMethod, type GrantType, type PkceMethod } from '../../domain/client.ts';
import type { ClientStore, PageQuery } from '../ports.ts';
import { escapeLike } from './attributes.ts';
import { translated } from './errors.ts';
import { atomically } from './unit-of-work.ts';
import { prepared } from './prepared.ts';
import type { ClientsTable, Database } from './schema.ts';

export class SqlClientStore implements ClientStore {
  readonly #db: Kysely<Database>;
  readonly #q: ReturnType<typeof statements>;
  /**
   * The last client built from each row. Every back-channel request reads its client, and parsing
   * the row's four JSON columns each time was 5 % of an introspection (docs/performance.md). The
   * row is still read on every call, so a change made by another process is seen at once; only
   * an identical row reuses the (frozen) client built from it.
   */
  readonly #built: Map<string, { row: Selectable<ClientsTable>; client: Client }>;

  /** `sharing`: a store whose compiled statements to reuse (the same store inside a unit of work). */
  constructor(db: Kysely<Database>, sharing?: SqlClientStore) {
    this.#db = db;
    this.#q = sharing ? sharing.#q : statements(db);
    this.#built = sharing ? sharing.#built : new Map();
  }

  async insert(client: Client): Promise<void> {
    await atomically(this.#db, async (db) => {
      // A policy that does not exist (or is deleted meanwhile) is a MissingReferenceError (migration 012).
      await translated('client', () => db.insertInto('clients').values(toRow(client)).execute());
      await insertResourceUris(db, client);
      await insertResourceScopes(db, client);
    });
  }

  async get(clientId: string): Promise<Client | undefined> {
    const row = await this.#q.get.first({ clientId }, this.#db);
    return row ? this.#build(row) : undefined;
  }

  async findByResourceUri(uri: string): Promise<Client | undefined> {
    const row = await this.#q.byResourceUri.first({ uri }, this.#db);
    return row ? this.#build(row) : undefined;
  }

  async resourceScopeOwners(values: readonly string[]): Promise<Map<string, string>> {
    if (values.length === 0) return new Map();
    // One value (one audience, the usual token) is a compiled statement: it runs on introspection
    // and every grant that asks for an audience (docs/performance.md).
    const rows =
      values.length === 1
        ? (await this.#q.resourceScopeOwner.execute({ scope: values[0]! }, this.#db)).rows
        : await this.#db.selectFrom('client_resource_scopes').select(['scope', 'client_id']).where('scope', 'in', [...values]).execute();
    return new Map(rows.map((row) => [row.scope, row.client_id]));
  }

  /** The client of a row another store's statement read with its own (TokenStore.introspectionRead), built as `get` builds it. */
  fromStoredRow(row: Selectable<ClientsTable>): Client {
    return this.#build(row);
  }

  #build(row: Selectable<ClientsTable>): Client {
    const built = this.#built.get(row.client_id);
    if (built && sameRow(built.row, row)) return built.client;
    const client = deepFreeze(fromRow(row));
    if (this.#built.size >= BUILT_CLIENTS) this.#built.delete(this.#built.keys().next().value!);
    this.#built.set(row.client_id, { row, client });
    return client;
  }

  async list(): Promise<Client[]> {
    const rows = await this.#db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('client_id').execute();
    return rows.map(fromRow);
  }

  async update(client: Client): Promise<boolean> {
    const { client_id: _id, created_at: _created, ...row } = toRow(client);
    return atomically(this.#db, async (db) => {
      const result = await translated('client', () => db.updateTable('clients').set(row).where('client_id', '=', client.clientId).executeTakeFirst());
      if (result.numUpdatedRows === 0n) return false;
      // The URIs as registered now: the old rows go, the new ones go in; another client's URI is a conflict.
      await db.deleteFrom('client_resource_uris').where('client_id', '=', client.clientId).execute();
      await insertResourceUris(db, client);
      await db.deleteFrom('client_resource_scopes').where('client_id', '=', client.clientId).execute();
      await insertResourceScopes(db, client);
      return true;
    });
  }

  async attachPolicyIfNone(clientId: string, policyName: string, now: number): Promise<boolean> {
    // The condition is in the statement (`authorization_policy is null`), not a read before it.
    const result = await translated('client', () =>
      this.#db.updateTable('clients').set({ authorization_policy: policyName, updated_at: now }).where('client_id', '=', clientId).where('authorization_policy', 'is', null).executeTakeFirst(),
    );
    return result.numUpdatedRows > 0n;
  }

  async delete(clientId: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('clients').where('client_id', '=', clientId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async page(query: PageQuery<string>): Promise<Client[]> {
    let select = this.#db.selectFrom('clients').selectAll().orderBy('client_id').limit(query.limit);
    if (query.after !== undefined) select = select.where('client_id', '>', query.after);
    if (query.q !== undefined && query.q !== '') {
      const pattern = `%${escapeLike(query.q.toLowerCase())}%`;
      select = select.where((eb) => eb.or([sql<SqlBool>`lower(client_id) like ${pattern} escape '\\'`, sql<SqlBool>`lower(name) like ${pattern} escape '\\'`]));
    }
    return (await select.execute()).map(fromRow);
  }

  async insertIfAbsent(client: Client): Promise<boolean> {
    return atomically(this.#db, async (db) => {
      const result = await translated('client', () => db.insertInto('clients').values(toRow(client)).onConflict((oc) => oc.column('client_id').doNothing()).executeTakeFirst());
      if ((result.numInsertedOrUpdatedRows ?? 0n) === 0n) return false;
      await insertResourceUris(db, client);
      await insertResourceScopes(db, client);
      return true;
    });
  }
}

function statements(db: Kysely<Database>) {
  return {
    get: prepared<{ clientId: string }, Selectable<ClientsTable>>(db, (p) => db.selectFrom('clients').selectAll().where('client_id', '=', p('clientId'))),
    resourceScopeOwner: prepared<{ scope: string }, { scope: string; client_id: string }>(db, (p) => db.selectFrom('client_resource_scopes').select(['scope', 'client_id']).where('scope', '=', p('scope'))),
    byResourceUri: prepared<{ uri: string }, Selectable<ClientsTable>>(db, (p) =>
      db.selectFrom('client_resource_uris').innerJoin('clients', 'clients.client_id', 'client_resource_uris.client_id').selectAll('clients').where('client_resource_uris.uri', '=', p('uri')),
    ),
  };
}

/**
 * The resource server's `resource_uris` as rows of client_resource_uris (migration 014), whose
 * primary key keeps each URI to one client: a URI another client holds is a ConflictError.
 */
async function insertResourceUris(db: Kysely<Database>, client: Client): Promise<void> {
  const uris = resourceUrisOf(client);
  if (uris.length === 0) return;
  await translated('resource URI', () => db.insertInto('client_resource_uris').values(uris.map((uri) => ({ uri, client_id: client.clientId }))).execute());
}

/**
 * The resource server's `resource_scopes` as rows of client_resource_scopes (migration 019), whose
 * primary key keeps each value to one client: a value another client holds is a ConflictError.
 */
async function insertResourceScopes(db: Kysely<Database>, client: Client): Promise<void> {
  const scopes = resourceScopesOf(client);
  if (scopes.length === 0) return;
  await translated('resource scope', () => db.insertInto('client_resource_scopes').values(scopes.map((scope) => ({ scope, client_id: client.clientId }))).execute());
}

const BUILT_CLIENTS = 1000;

/** Every column of a client's row, for a statement that reads one beside other rows (TokenStore.introspectionRead); a record so that none is missed. */
export const CLIENT_COLUMNS = Object.keys({
  client_id: true,
  name: true,
  secret_hash: true,
  secret_sealed: true,
  active: true,
  redirect_uris: true,
  token_endpoint_auth_method: true,
  grant_types: true,
  code_challenge_method: true,
  scope: true,
  refresh_tokens: true,
  rotate_refresh_tokens: true,
  access_token_ttl: true,
  post_logout_redirect_uris: true,
  id_token_signed_response_alg: true,
  userinfo_signed_response_alg: true,
  authorization_policy: true,
  metadata: true,
  created_at: true,
  updated_at: true,
} satisfies Record<keyof ClientsTable, true>) as (keyof ClientsTable)[];

function sameRow(a: Selectable<ClientsTable>, b: Selectable<ClientsTable>): boolean {
  for (const column in a) {
    if (a[column as keyof ClientsTable] !== b[column as keyof ClientsTable]) return false;
  }
  return true;
}

/** Shared between requests, so nobody may change it. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function toRow(c: Client): ClientsTable {
  return {
    client_id: c.clientId,
    name: c.name,
    secret_hash: c.secretHash ?? null,
    secret_sealed: c.secretSealed ?? null,
    active: c.active ? 1 : 0,
    redirect_uris: JSON.stringify(c.redirectUris),
    token_endpoint_auth_method: c.tokenEndpointAuthMethod ?? null,
    grant_types: JSON.stringify(c.grantTypes),
    code_challenge_method: c.codeChallengeMethod ?? null,
    scope: c.scope ?? null,
    refresh_tokens: c.refreshTokens ? 1 : 0,
    rotate_refresh_tokens: c.rotateRefreshTokens ? 1 : 0,
    access_token_ttl: c.accessTokenTtl ?? null,
    post_logout_redirect_uris: JSON.stringify(c.postLogoutRedirectUris),
    // Null is the registered default, RS256 (OIDC Registration §2).
    id_token_signed_response_alg: c.idTokenSignedResponseAlg === DEFAULT_SIGNING_ALG ? null : c.idTokenSignedResponseAlg,
    userinfo_signed_response_alg: c.userinfoSignedResponseAlg ?? null,
    authorization_policy: c.authorizationPolicy ?? null,
    metadata: JSON.stringify(c.metadata),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

function fromRow(r: Selectable<ClientsTable>): Client {
  return {
    clientId: r.client_id,
    name: r.name,
    secretHash: r.secret_hash ?? undefined,
    // Only client_secret_jwt clients have one; the others' objects stay as they were before migration 009.
    ...(r.secret_sealed === null ? {} : { secretSealed: r.secret_sealed }),
    active: r.active === 1,
    redirectUris: JSON.parse(r.redirect_uris) as string[],
    tokenEndpointAuthMethod: (r.token_endpoint_auth_method ?? undefined) as ClientAuthMethod | undefined,
    grantTypes: JSON.parse(r.grant_types) as GrantType[],
    codeChallengeMethod: (r.code_challenge_method ?? undefined) as PkceMethod | undefined,
    scope: r.scope ?? undefined,
    refreshTokens: r.refresh_tokens === 1,
    rotateRefreshTokens: r.rotate_refresh_tokens === 1,
    accessTokenTtl: r.access_token_ttl ?? undefined,
    postLogoutRedirectUris: JSON.parse(r.post_logout_redirect_uris) as string[],
    idTokenSignedResponseAlg: signingAlgOf(r.id_token_signed_response_alg) ?? DEFAULT_SIGNING_ALG,
    userinfoSignedResponseAlg: signingAlgOf(r.userinfo_signed_response_alg),
    // Only clients with a policy have the member (migration 012), as with secretSealed.
    ...(r.authorization_policy === null ? {} : { authorizationPolicy: r.authorization_policy }),
    metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * A stored algorithm name; registration accepts only algorithms we sign with, so anything else is
 * a row from a newer version: refused loudly rather than signed with something the client did
 * not ask for.
 */
function signingAlgOf(value: string | null): SigningAlg | undefined {
  if (value === null) return undefined;
  if (!isSigningAlg(value)) throw new Error(`a client's signing algorithm ${JSON.stringify(value)} is not one gatehouse signs with`);
  return value;
}
