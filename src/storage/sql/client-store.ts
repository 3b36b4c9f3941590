import type { Kysely, Selectable } from 'kysely';
import type { Client, ClientAuthMethod, GrantType, PkceMethod } from '../../domain/client.ts';
import type { ClientStore } from '../ports.ts';
import { translated } from './errors.ts';
import type { ClientsTable, Database } from './schema.ts';

export class SqlClientStore implements ClientStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(client: Client): Promise<void> {
    await translated('client', () => this.#db.insertInto('clients').values(toRow(client)).execute());
  }

  async get(clientId: string): Promise<Client | undefined> {
    const row = await this.#db.selectFrom('clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
    return row && fromRow(row);
  }

  async list(): Promise<Client[]> {
    const rows = await this.#db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('client_id').execute();
    return rows.map(fromRow);
  }

  async update(client: Client): Promise<boolean> {
    const { client_id: _id, created_at: _created, ...row } = toRow(client);
    const result = await this.#db.updateTable('clients').set(row).where('client_id', '=', client.clientId).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async delete(clientId: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('clients').where('client_id', '=', clientId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}

function toRow(c: Client): ClientsTable {
  return {
    client_id: c.clientId,
    name: c.name,
    secret_hash: c.secretHash ?? null,
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
    metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
