import type { Kysely } from 'kysely';
import type { AccountRegistration, AccountRegistrationStore } from '../ports.ts';
import type { AccountRegistrationsTable, Database } from './schema.ts';

/** Self-registration links (migration 031, `account_registrations`). */
export class SqlAccountRegistrationStore implements AccountRegistrationStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(r: AccountRegistration): Promise<void> {
    await this.#db
      .insertInto('account_registrations')
      .values({ token_hash: r.tokenHash, email: r.email, given_name: r.givenName ?? null, family_name: r.familyName ?? null, locale: r.locale, return_to: r.returnTo ?? null, created_at: r.createdAt, expires_at: r.expiresAt })
      .execute();
  }

  async find(tokenHash: string, now: number): Promise<AccountRegistration | undefined> {
    const row = await this.#db.selectFrom('account_registrations').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', now).executeTakeFirst();
    return row && fromRow(row);
  }

  async take(tokenHash: string, now: number): Promise<AccountRegistration | undefined> {
    // One statement decides and consumes (as PasswordResetStore.take): of racing takes only one
    // deletes the row; the others' DELETE finds it gone (on PostgreSQL after the winner's row lock).
    const row = await this.#db.deleteFrom('account_registrations').where('token_hash', '=', tokenHash).where('expires_at', '>', now).returningAll().executeTakeFirst();
    return row && fromRow(row);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const expired = this.#db.selectFrom('account_registrations').select('token_hash').where('expires_at', '<=', now).limit(limit);
    const result = await this.#db.deleteFrom('account_registrations').where('token_hash', 'in', expired).where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function fromRow(r: AccountRegistrationsTable): AccountRegistration {
  return { tokenHash: r.token_hash, email: r.email, givenName: r.given_name ?? undefined, familyName: r.family_name ?? undefined, locale: r.locale, returnTo: r.return_to ?? undefined, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) };
}
