import { sql, type Kysely } from 'kysely';

/**
 * Second factors (issue 24; src/domain/factor.ts, docs/second-factors.md). `user_factors`: one row
 * per factor of a user. A TOTP factor keeps its secret — sealed under GATEHOUSE_KEY_ENCRYPTION_KEY
 * (`sealed` = 1, src/crypto/key-encryption.ts) or, with no key set, base32 in the clear as signing
 * keys are (`sealed` = 0) — its algorithm, digits and period, and `last_step`, the last time step
 * accepted (RFC 6238 §5.2: a code is accepted once; FactorStore.useTotpStep). A user has at most
 * one set of recovery codes (a partial unique index), its codes in `recovery_codes` as SHA-256.
 * Deleting the user deletes its factors, deleting a factor its codes. Additive: older instances
 * never read the tables.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_factors')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret', 'text')
    .addColumn('sealed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('algorithm', 'text')
    .addColumn('digits', 'integer')
    .addColumn('period', 'integer')
    .addColumn('last_step', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('user_factors_user_id').on('user_factors').column('user_id').execute();
  // Same syntax on SQLite and PostgreSQL: one set of recovery codes per user.
  await sql`create unique index user_factors_one_recovery_set on user_factors (user_id) where kind = 'recovery_codes'`.execute(db);
  await db.schema
    .createTable('recovery_codes')
    .addColumn('factor_id', 'text', (c) => c.notNull().references('user_factors.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addPrimaryKeyConstraint('recovery_codes_pk', ['factor_id', 'code_hash'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
