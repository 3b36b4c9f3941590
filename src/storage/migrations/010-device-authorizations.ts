import type { Kysely } from 'kysely';

/**
 * Device authorizations (RFC 8628, src/domain/device-authorization.ts). Keyed by the device
 * code's SHA-256; the user code is unique so the user-code page finds exactly one row by it (a
 * collision at issue is retried with a new code). `too_fast` records whether the latest poll came
 * sooner than the interval: the poll statement computes it from the row's previous values in the
 * same UPDATE that moves `last_polled_at`, so concurrent polls cannot both pass as on time.
 * Additive: older instances never read the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('device_authorizations')
    .addColumn('device_code_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_code', 'text', (c) => c.notNull().unique())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('last_polled_at', 'bigint')
    .addColumn('too_fast', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('user_id', 'text')
    .addColumn('session_index', 'text')
    .addColumn('auth_time', 'bigint')
    .addColumn('amr', 'text')
    .addColumn('acr', 'text')
    .addColumn('decided_at', 'bigint')
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('device_authorizations_expires_at').on('device_authorizations').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
