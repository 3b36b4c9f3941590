import type { Kysely } from 'kysely';

/**
 * Self-registration (issue 25 item 4, docs/registration.md, decisions AM60–AM69): one row per
 * registration link mailed, keyed by the SHA-256 of the link's 256-bit random token (the token is
 * only in the mail), holding what the form asked for: the address the link proves, the names
 * typed, the language of the pages, and the
 * sign-in (an authorization request under the issuer) to go back to once the account exists. Taken (deleted and returned) by one conditional DELETE, so a
 * link creates at most one account. No user exists until the link is followed, so nothing here
 * refers to `users`; the cleanup job deletes expired rows by `expires_at`. Named apart from
 * `registration_*` (RFC 7591 client registration, migration 016).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('account_registrations')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('given_name', 'text')
    .addColumn('family_name', 'text')
    .addColumn('locale', 'text', (c) => c.notNull())
    .addColumn('return_to', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('account_registrations_expires_at').on('account_registrations').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
