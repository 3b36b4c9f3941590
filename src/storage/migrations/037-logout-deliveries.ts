import type { Kysely } from 'kysely';

/**
 * The last back-channel logout delivery per client (issue 26 item 2, "outcomes visible per client
 * in the console and API"; docs/logout.md; decisions LO13): one row per client, overwritten by
 * each attempt at a logout token for it — delivered, or failed with the error an administrator
 * needs — unless a later attempt was recorded first (another instance). Kept beside the outbox,
 * not in it: the outbox's messages are per session and are deleted a week after delivery, while
 * "is this application's endpoint working?" is a question about the client. No foreign key, as
 * session_clients: a deleted client's row is read by nobody (the API answers 404 for the client).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('logout_deliveries')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempted_at', 'bigint', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
