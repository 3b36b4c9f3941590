import type { Kysely } from 'kysely';

/**
 * The relying parties an SSO session gave tokens to (issue 26 item 2; OpenID Connect Back-Channel
 * Logout 1.0 §2.3 "Remembering Logged-In RPs"; decisions LO3): one row per (session, client, sid
 * the client was given) — the sid stays the one in the client's ID token when a sign-in of the same
 * user in the same browser replaces the session and the rows move to the new one (LO4) —
 * written in the code exchange's unit of work for a client that registered a logout URI, and taken
 * by the unit of work that ends the session, which queues a logout token for each. Not a foreign
 * key to `sessions`: a row is written only while its session exists (a conditional INSERT … SELECT)
 * and the cleanup job deletes the rows whose session is gone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('session_clients')
    .addColumn('session_index', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('sid', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('session_clients_pk', ['session_index', 'client_id', 'sid'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
