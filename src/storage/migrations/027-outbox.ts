import { sql, type Kysely } from 'kysely';

/**
 * The durable outbox (issue 25, item 1; src/domain/outbox.ts; docs/decisions.md AM1–AM30): mail
 * now, webhooks and back-channel logout tokens later (issue 26), one table for every channel.
 * `dedupe_key` is unique, so a message written twice is written once. A sender claims due rows
 * by `(status, next_attempt_at)`; the administrators' list reads `(created_at, id)` newest first,
 * optionally by status.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .addCheckConstraint('outbox_status', sql`status in ('pending', 'delivered', 'dead')`)
    .execute();
  await db.schema.createIndex('outbox_due').on('outbox').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('outbox_created').on('outbox').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('outbox_status_created').on('outbox').columns(['status', 'created_at', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
