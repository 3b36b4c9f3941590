import type { Kysely } from 'kysely';

/**
 * Consents to third-party clients (issue 13, item 4; src/domain/consent.ts): one row per user and
 * client, the consented scope values as one space-separated, sorted set. Deleting the user or the
 * client deletes their consents. Additive: older instances never read the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('consents')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('granted_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('consents_pk', ['user_id', 'client_id'])
    .execute();
  // Deleting a client cascades here: find its rows without reading the table.
  await db.schema.createIndex('consents_client_id').on('consents').column('client_id').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
