import type { Kysely, Selectable } from 'kysely';
import type { EmailCode, EmailCodePurpose } from '../../domain/factor.ts';
import type { EmailCodeStore } from '../ports.ts';
import { translated } from './errors.ts';
import type { Database, EmailCodesTable } from './schema.ts';

/** E-mail one-time codes (migration 030, `email_codes`). Race rules: EmailCodeStore. */
export class SqlEmailCodeStore implements EmailCodeStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(c: EmailCode): Promise<void> {
    await translated('e-mail code', () =>
      this.#db
        .insertInto('email_codes')
        .values({ id: c.id, user_id: c.userId, factor_id: c.factorId ?? null, purpose: c.purpose, address: c.address, code_hash: c.codeHash, created_at: c.createdAt, expires_at: c.expiresAt })
        .execute(),
    );
  }

  async take(userId: string, purpose: EmailCodePurpose, codeHash: string, now: number): Promise<EmailCode | undefined> {
    // One statement decides and consumes: of racing takes only one deletes the row (on PostgreSQL
    // the others' DELETE waits on the winner's row lock, then finds it gone). Two live codes with
    // one hash (a 1 in 22^8 collision) are both consumed, which costs only a resend.
    const row = await this.#db
      .deleteFrom('email_codes')
      .where('user_id', '=', userId)
      .where('purpose', '=', purpose)
      .where('code_hash', '=', codeHash)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async deleteOfUser(userId: string, purpose: EmailCodePurpose): Promise<number> {
    const result = await this.#db.deleteFrom('email_codes').where('user_id', '=', userId).where('purpose', '=', purpose).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const expired = this.#db.selectFrom('email_codes').select('id').where('expires_at', '<=', now).limit(limit);
    const result = await this.#db.deleteFrom('email_codes').where('id', 'in', expired).where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function fromRow(r: Selectable<EmailCodesTable>): EmailCode {
  return {
    id: r.id,
    userId: r.user_id,
    factorId: r.factor_id ?? undefined,
    purpose: r.purpose as EmailCodePurpose,
    address: r.address,
    codeHash: r.code_hash,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  };
}
