import type { Kysely } from 'kysely';

/**
 * Reservations in the throttle's counters (src/oauth/throttling, ThrottleStore.reserve): an
 * attempt is counted before its password is verified, so concurrent guesses cannot all pass a
 * check made before any of them failed.
 *
 * - `pending`: attempts reserved and still being verified. Each counts as a failure while it is
 *   in flight; a failure then moves it to `failures`, a success only takes it away.
 * - `reserved_at`: when the latest attempt was reserved; while any is pending, the wait also runs
 *   from it. Kept apart from `last_failure_at` so a success leaves the time of the last real
 *   failure as it was.
 *
 * Additive: existing counters get 0 pending and go on as they were.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite adds one column per statement.
  await db.schema.alterTable('throttle_counters').addColumn('pending', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('throttle_counters').addColumn('reserved_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
