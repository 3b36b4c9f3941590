import type { Kysely } from 'kysely';
import type { PendingSignIn } from '../../domain/pending-sign-in.ts';
import type { PendingSignInStore } from '../ports.ts';
import type { Database, PendingSignInsTable } from './schema.ts';

/** Sign-ins waiting for the second factor (migration 023, `pending_sign_ins`). */
export class SqlPendingSignInStore implements PendingSignInStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(p: PendingSignIn): Promise<void> {
    await this.#db
      .insertInto('pending_sign_ins')
      .values({ id_hash: p.idHash, user_id: p.userId, client_id: p.clientId, binding: p.binding, amr: JSON.stringify(p.amr), created_at: p.createdAt, expires_at: p.expiresAt })
      .execute();
  }

  async find(idHash: string, now: number): Promise<PendingSignIn | undefined> {
    const row = await this.#db.selectFrom('pending_sign_ins').selectAll().where('id_hash', '=', idHash).where('expires_at', '>', now).executeTakeFirst();
    return row && fromRow(row);
  }

  async take(idHash: string, now: number): Promise<PendingSignIn | undefined> {
    // One statement decides and consumes: of racing takes only one deletes the row (the others'
    // DELETE finds it gone, on PostgreSQL after waiting for the winner's row lock), so only one
    // gets it back. Both databases support DELETE … RETURNING (SQLite since 3.35).
    const row = await this.#db.deleteFrom('pending_sign_ins').where('id_hash', '=', idHash).where('expires_at', '>', now).returningAll().executeTakeFirst();
    return row && fromRow(row);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const expired = this.#db.selectFrom('pending_sign_ins').select('id_hash').where('expires_at', '<=', now).limit(limit);
    const result = await this.#db.deleteFrom('pending_sign_ins').where('id_hash', 'in', expired).where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function fromRow(r: PendingSignInsTable): PendingSignIn {
  return { idHash: r.id_hash, userId: r.user_id, clientId: r.client_id, binding: r.binding, amr: JSON.parse(r.amr) as string[], createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) };
}
