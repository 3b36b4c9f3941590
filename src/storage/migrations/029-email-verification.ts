import type { Kysely } from 'kysely';

/**
 * E-mail verification (issue 25 item 3, docs/email-verification.md, decisions AM50–AM59).
 *
 * `users.email_verified`: 1 when the user's address was proven by a verification link followed
 * (or an administrator's explicit act), 0 otherwise. Every existing user starts at 0 (AM50):
 * nothing recorded that their address was ever proven, and the `email_verified` claim must be
 * exact (OIDC Core §5.1) — an address that only "looked right" is not verified.
 *
 * `email_verifications`: one row per verification link sent, keyed by the SHA-256 of the link's
 * 256-bit random token (the token itself is only in the mail), bound to the user, the address
 * being verified and the address the user had when it was sent (`previous_email`, '' for none).
 * Taken by one conditional DELETE; the address is set (and marked verified) only while the user's
 * address is still `previous_email`, so a link dies when the address changes any other way. The
 * cleanup job deletes expired rows by `expires_at`; a deleted user's rows go with the user.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('email_verifications')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('previous_email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_verifications_expires_at').on('email_verifications').column('expires_at').execute();
  await db.schema.createIndex('email_verifications_user_id').on('email_verifications').column('user_id').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
