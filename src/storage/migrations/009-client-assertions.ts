import type { Kysely } from 'kysely';

/**
 * JWT client authentication (RFC 7523 §3, OIDC Core §9).
 *
 * - `client_assertions`: the `jti` of every client assertion accepted, kept until the assertion's
 *   `exp` so it is used once across every instance (RFC 7523 §3 item 7). `key` is the SHA-256 of
 *   the client_id and the jti, so keys have a fixed length whatever was sent; the primary key makes
 *   "insert if absent" one atomic statement. The cleanup job deletes by `expires_at`.
 * - `clients.secret_sealed`: a client registered for client_secret_jwt keeps its secret encrypted
 *   with GATEHOUSE_KEY_ENCRYPTION_KEY (an HMAC cannot be checked against a hash of its key;
 *   docs/decisions.md, "client_secret_jwt secrets are sealed, not hashed"). Null for every other client.
 *
 * Additive: existing clients get null and go on as they were.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('client_assertions')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('client_assertions_expires_at').on('client_assertions').column('expires_at').execute();
  await db.schema.alterTable('clients').addColumn('secret_sealed', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
