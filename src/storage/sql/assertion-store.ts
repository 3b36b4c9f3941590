import type { Kysely } from 'kysely';
import type { AssertionStore } from '../ports.ts';
import type { Database } from './schema.ts';

/** Used client-assertion jtis (migration 009, `client_assertions`). */
export class SqlAssertionStore implements AssertionStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async useOnce(key: string, expiresAt: number, now: number): Promise<boolean> {
    // One statement decides and records: the primary key makes concurrent inserts of one key
    // conflict, and the conflicting row is locked (PostgreSQL) or the database is (SQLite) while
    // the DO UPDATE's WHERE reads it, so of N racing calls exactly one gets a row back. A row
    // whose assertion expired may be taken again (it would be refused by its exp anyway; the
    // cleanup job may simply not have deleted it yet).
    const row = await this.#db
      .insertInto('client_assertions')
      .values({ key, expires_at: expiresAt })
      .onConflict((oc) => oc.column('key').doUpdateSet({ expires_at: expiresAt }).where('client_assertions.expires_at', '<=', now))
      .returning('key')
      .executeTakeFirst();
    return row !== undefined;
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const expired = this.#db.selectFrom('client_assertions').select('key').where('expires_at', '<=', now).limit(limit);
    const result = await this.#db.deleteFrom('client_assertions').where('key', 'in', expired).where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
