import type { Kysely } from 'kysely';
import type { AssertionStore } from '../ports.ts';
import { prepared } from './prepared.ts';
import type { Database } from './schema.ts';

/** Used client-assertion jtis (migration 009, `client_assertions`). */
export class SqlAssertionStore implements AssertionStore {
  readonly #db: Kysely<Database>;
  readonly #q: ReturnType<typeof statements>;

  /** `sharing`: a store whose compiled statements to reuse (the same store inside a unit of work). */
  constructor(db: Kysely<Database>, sharing?: SqlAssertionStore) {
    this.#db = db;
    this.#q = sharing ? sharing.#q : statements(db);
  }

  async useOnce(key: string, expiresAt: number, now: number): Promise<boolean> {
    // One statement decides and records: the primary key makes concurrent inserts of one key
    // conflict, and the conflicting row is locked (PostgreSQL) or the database is (SQLite) while
    // the DO UPDATE's WHERE reads it, so of N racing calls exactly one gets a row back. A row
    // whose assertion expired may be taken again (it would be refused by its exp anyway; the
    // cleanup job may simply not have deleted it yet).
    // Compiled once (src/storage/sql/prepared.ts): every JWT-authenticated request runs it.
    return (await this.#q.useOnce.first({ key, expiresAt, now }, this.#db)) !== undefined;
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const expired = this.#db.selectFrom('client_assertions').select('key').where('expires_at', '<=', now).limit(limit);
    const result = await this.#db.deleteFrom('client_assertions').where('key', 'in', expired).where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function statements(db: Kysely<Database>) {
  return {
    useOnce: prepared<{ key: string; expiresAt: number; now: number }, { key: string }>(db, (p) =>
      db
        .insertInto('client_assertions')
        .values({ key: p('key'), expires_at: p('expiresAt') })
        .onConflict((oc) => oc.column('key').doUpdateSet({ expires_at: p('expiresAt') }).where('client_assertions.expires_at', '<=', p('now')))
        .returning('key'),
    ),
  };
}
