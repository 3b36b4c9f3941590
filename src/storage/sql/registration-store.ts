import type { Kysely, Selectable } from 'kysely';
import type { InitialAccessToken, RegistrationStore } from '../ports.ts';
import { translated } from './errors.ts';
import type { Database, InitialAccessTokensTable } from './schema.ts';

/** Initial and registration access tokens of dynamic client registration (migration 016). */
export class SqlRegistrationStore implements RegistrationStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insertInitialAccessToken(token: InitialAccessToken): Promise<void> {
    await translated('initial access token', () =>
      this.#db
        .insertInto('initial_access_tokens')
        .values({
          id: token.id,
          token_hash: token.tokenHash,
          description: token.description ?? null,
          created_by: token.createdBy,
          created_at: token.createdAt,
          expires_at: token.expiresAt,
          uses_left: token.usesLeft,
        })
        .execute(),
    );
  }

  async findInitialAccessToken(tokenHash: string): Promise<InitialAccessToken | undefined> {
    const row = await this.#db.selectFrom('initial_access_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return row && fromRow(row);
  }

  async useInitialAccessToken(tokenHash: string, now: number): Promise<InitialAccessToken | undefined> {
    // One statement decides and spends: the row is locked by the UPDATE itself (PostgreSQL) or the
    // unit of work holds the write lock (SQLite), so no two callers can both see the last use.
    const row = await this.#db
      .updateTable('initial_access_tokens')
      .set((eb) => ({ uses_left: eb('uses_left', '-', 1) }))
      .where('token_hash', '=', tokenHash)
      .where('uses_left', '>', 0)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async listInitialAccessTokens(query: { after?: string | undefined; limit: number }): Promise<InitialAccessToken[]> {
    let select = this.#db.selectFrom('initial_access_tokens').selectAll().orderBy('id').limit(query.limit);
    if (query.after !== undefined) select = select.where('id', '>', query.after);
    return (await select.execute()).map(fromRow);
  }

  async deleteInitialAccessToken(id: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('initial_access_tokens').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async deleteExpiredInitialAccessTokens(before: number, limit: number): Promise<number> {
    // No index on expires_at: the table holds what administrators minted by hand, a few rows.
    const result = await this.#db
      .deleteFrom('initial_access_tokens')
      .where('id', 'in', (eb) => eb.selectFrom('initial_access_tokens').select('id').where('expires_at', '<', before).limit(limit))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async insertRegistrationToken(clientId: string, tokenHash: string, now: number): Promise<void> {
    await translated('registration access token', () => this.#db.insertInto('registration_access_tokens').values({ client_id: clientId, token_hash: tokenHash, created_at: now }).execute());
  }

  async registrationTokenHash(clientId: string): Promise<string | undefined> {
    const row = await this.#db.selectFrom('registration_access_tokens').select('token_hash').where('client_id', '=', clientId).executeTakeFirst();
    return row?.token_hash;
  }
}

function fromRow(row: Selectable<InitialAccessTokensTable>): InitialAccessToken {
  return {
    id: row.id,
    tokenHash: row.token_hash,
    description: row.description ?? undefined,
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    usesLeft: Number(row.uses_left),
  };
}
