import type { Kysely } from 'kysely';

/**
 * Pending sign-ins (issue 24, docs/decisions.md SA20): a right password for a user with a second
 * factor, waiting for the factor. Keyed by the SHA-256 of the browser's random cookie value; taken
 * (deleted and returned) by one conditional DELETE, so it starts at most one session. The cleanup
 * job deletes expired rows by `expires_at`; a deleted user's rows go with the user.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pending_sign_ins')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('binding', 'text', (c) => c.notNull())
    .addColumn('amr', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pending_sign_ins_expires_at').on('pending_sign_ins').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
