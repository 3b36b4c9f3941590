import type { Kysely } from 'kysely';

/**
 * Audit events kept in the store (issue 14; docs/operations.md, "Audit events in the store"), so
 * the management API can list them: one row per event, `id` time-ordered and unique (a UUIDv7 of
 * the event's time), `at` its time in epoch ms, the event's subject user and client and its acting
 * administrator (`actor_id`: an admin's user id or the CLI's OS account) as columns to filter on,
 * and the rest of the event as JSON text.
 *
 * Lists read newest first by (at, id) descending with a keyset; each index ends in (at, id) so a
 * filtered page is one backward index range scan (B-trees read either way on both databases, so
 * ascending indexes serve the descending order). No foreign keys: the trail outlives the users and
 * clients it names. Additive: older instances never read the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('client_id', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').columns(['at', 'id']).execute();
  await db.schema.createIndex('audit_events_event_at').on('audit_events').columns(['event', 'at', 'id']).execute();
  await db.schema.createIndex('audit_events_user_at').on('audit_events').columns(['user_id', 'at', 'id']).execute();
  await db.schema.createIndex('audit_events_actor_at').on('audit_events').columns(['actor_id', 'at', 'id']).execute();
  await db.schema.createIndex('audit_events_client_at').on('audit_events').columns(['client_id', 'at', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
