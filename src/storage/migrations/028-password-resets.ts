import type { Kysely } from 'kysely';

/**
 * Password resets (issue 25 item 2, docs/password-reset.md, decisions AM41–AM43): one row per
 * reset link sent. Keyed by the SHA-256 of the link's 256-bit random token (the token itself is
 * only in the mail); bound to the user and to a fingerprint of the password hash it replaces, so a
 * link dies when the password changes any other way. Taken (deleted and returned) by one
 * conditional DELETE, so it sets a password at most once. The cleanup job deletes expired rows by
 * `expires_at`; a deleted user's rows go with the user.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('password_resets')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('password_fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('password_resets_expires_at').on('password_resets').column('expires_at').execute();
  await db.schema.createIndex('password_resets_user_id').on('password_resets').column('user_id').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
