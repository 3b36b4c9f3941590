import { sql, type Kysely } from 'kysely';

/**
 * E-mail one-time codes (issue 25 item 5; src/oauth/factors/email-code.ts, docs/second-factors.md,
 * decisions AM90–AM99).
 *
 * `user_factors.email`: the address an e-mail factor (kind 'email_otp') sends its codes to, fixed
 * at enrolment; null for the other kinds. At most one e-mail factor per user (a partial unique
 * index, as recovery codes have; AM91): concurrent confirmations of an enrolment store one.
 *
 * `email_codes`: the codes sent and not yet used, one row each: the HMAC-SHA-256 of the code
 * (short codes are guessable offline from a plain hash, AM93), the user, the purpose
 * ('sign_in' | 'enrol' | 'verify_email'), the address it went to and, for a sign-in, the factor
 * (deleting the factor deletes its codes). Taken by one conditional DELETE, so a code is used at
 * most once; expired rows are deleted by the cleanup job. Additive: older instances never read
 * the column or the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('user_factors').addColumn('email', 'text').execute();
  // Same syntax on SQLite and PostgreSQL.
  await sql`create unique index user_factors_one_email_factor on user_factors (user_id) where kind = 'email_otp'`.execute(db);
  await db.schema
    .createTable('email_codes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('factor_id', 'text', (c) => c.references('user_factors.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_codes_user_hash').on('email_codes').columns(['user_id', 'code_hash']).execute();
  await db.schema.createIndex('email_codes_factor_id').on('email_codes').column('factor_id').execute();
  await db.schema.createIndex('email_codes_expires_at').on('email_codes').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
