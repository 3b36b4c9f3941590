import type { Kysely } from 'kysely';

/**
 * Webhooks (issue 26 item 4; docs/webhooks.md; decisions WH1–WH30).
 *
 * `webhook_endpoints`: what administrators register. `events` is a JSON array of audit event
 * names, or `"*"`; `secret` and `previous_secret` are Standard Webhooks secrets, sealed under
 * GATEHOUSE_KEY_ENCRYPTION_KEY when one is set (`v1.…`) or in the clear (`whsec_…`).
 *
 * The outbox gains what webhooks need of it: `endpoint_id` (the delivery log per endpoint, read
 * by `(endpoint_id, created_at, id)` newest first), `ordering_key` (endpoint and subject: a
 * message is not claimed while an earlier pending one with its key exists, WH15) and
 * `response_status` (the receiver's last HTTP status, for the log). Null for other channels.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_created').on('webhook_endpoints').columns(['created_at', 'id']).execute();
  await db.schema.alterTable('outbox').addColumn('endpoint_id', 'text').execute();
  await db.schema.alterTable('outbox').addColumn('ordering_key', 'text').execute();
  await db.schema.alterTable('outbox').addColumn('response_status', 'integer').execute();
  await db.schema.createIndex('outbox_endpoint_created').on('outbox').columns(['endpoint_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('outbox_ordering').on('outbox').columns(['ordering_key', 'status', 'created_at', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
