import type { Kysely } from 'kysely';

/**
 * Dynamic client registration (RFC 7591, RFC 7592; issue 14, item 3; docs/decisions.md DR*).
 *
 * `initial_access_tokens`: what an administrator hands to automation so it may register clients
 * (RFC 7591 §3: "an OAuth 2.0 access token ... used to authorize the registration"). Only the
 * SHA-256 of the token is kept (src/lib/hash.ts), like every other token. A use is spent by one
 * conditional UPDATE (uses_left > 0 AND expires_at > now) in the unit of work that inserts the
 * client, so concurrent registrations can never spend more uses than the token has.
 *
 * `registration_access_tokens`: the one RFC 7592 §3 token per dynamically registered client,
 * keyed by its client; deleting the client deletes it. Additive: older instances never read them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('initial_access_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('uses_left', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('registration_access_tokens')
    .addColumn('client_id', 'text', (c) => c.primaryKey().references('clients.client_id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
