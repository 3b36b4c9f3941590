import type { Kysely } from 'kysely';
import type { PasswordReset, PasswordResetStore } from '../ports.ts';
import type { Database, PasswordResetsTable } from './schema.ts';

/** Password reset links (migration 028, `password_resets`). */
export class SqlPasswordResetStore implements PasswordResetStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(r: PasswordReset): Promise<void> {
    await this.#db
      .insertInto('password_resets')
      .values({ token_hash: r.tokenHash, user_id: r.userId, password_fingerprint: r.passwordFingerprint, created_at: r.createdAt, expires_at: r.expiresAt })
      .execute();
  }

  async find(tokenHash: string, now: number): Promise<PasswordReset | undefined> {
    const row = await this.#db.selectFrom('password_resets').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', now).executeTakeFirst();
    return row && fromRow(row);
  }

  async take(tokenHash: string, now: number): Promise<PasswordReset | undefined> {
    // One statement decides and consumes (as PendingSignInStore.take): of racing takes only one
    // deletes the row; the others' DELETE finds it gone (on PostgreSQL after the winner's row lock).
    const row = await this.#db.deleteFrom('password_resets').where('token_hash', '=', tokenHash).where('expires_at', '>', now).returningAll().executeTakeFirst();
    return row && fromRow(row);
  }

  async deleteOfUser(userId: string): Promise<number> {
    const result = await this.#db.deleteFrom('password_resets').where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const expired = this.#db.selectFrom('password_resets').select('token_hash').where('expires_at', '<=', now).limit(limit);
    const result = await this.#db.deleteFrom('password_resets').where('token_hash', 'in', expired).where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function fromRow(r: PasswordResetsTable): PasswordReset {
  return { tokenHash: r.token_hash, userId: r.user_id, passwordFingerprint: r.password_fingerprint, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) };
}
