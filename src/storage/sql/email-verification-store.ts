import type { Kysely } from 'kysely';
import type { EmailVerification, EmailVerificationStore } from '../ports.ts';
import type { Database, EmailVerificationsTable } from './schema.ts';

/** E-mail verification links (migration 029, `email_verifications`). */
export class SqlEmailVerificationStore implements EmailVerificationStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(v: EmailVerification): Promise<void> {
    await this.#db
      .insertInto('email_verifications')
      .values({ token_hash: v.tokenHash, user_id: v.userId, email: v.email, previous_email: v.previousEmail ?? '', created_at: v.createdAt, expires_at: v.expiresAt })
      .execute();
  }

  async find(tokenHash: string, now: number): Promise<EmailVerification | undefined> {
    const row = await this.#db.selectFrom('email_verifications').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', now).executeTakeFirst();
    return row && fromRow(row);
  }

  async take(tokenHash: string, now: number): Promise<EmailVerification | undefined> {
    // One statement decides and consumes (as PasswordResetStore.take): of racing takes only one
    // deletes the row; the others' DELETE finds it gone (on PostgreSQL after the winner's row lock).
    const row = await this.#db.deleteFrom('email_verifications').where('token_hash', '=', tokenHash).where('expires_at', '>', now).returningAll().executeTakeFirst();
    return row && fromRow(row);
  }

  async listOfUser(userId: string, now: number): Promise<EmailVerification[]> {
    const rows = await this.#db
      .selectFrom('email_verifications')
      .selectAll()
      .where('user_id', '=', userId)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .orderBy('token_hash')
      .execute();
    return rows.map(fromRow);
  }

  async deleteOfUser(userId: string): Promise<number> {
    const result = await this.#db.deleteFrom('email_verifications').where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const expired = this.#db.selectFrom('email_verifications').select('token_hash').where('expires_at', '<=', now).limit(limit);
    const result = await this.#db.deleteFrom('email_verifications').where('token_hash', 'in', expired).where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function fromRow(r: EmailVerificationsTable): EmailVerification {
  return {
    tokenHash: r.token_hash,
    userId: r.user_id,
    email: r.email,
    previousEmail: r.previous_email === '' ? undefined : r.previous_email,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  };
}
