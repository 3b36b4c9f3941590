import type { Kysely } from 'kysely';

/**
 * Failure counters of the throttle (src/oauth/throttling). One row per key: a scope and the
 * SHA-256 of what it counts (a username, a client_id, an address), so keys have a fixed length
 * whatever was sent. `expires_at` is when the counter is forgotten; the cleanup job deletes by it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('throttle_counters')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('first_failure_at', 'bigint', (c) => c.notNull())
    .addColumn('last_failure_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('throttle_counters_expires_at').on('throttle_counters').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
