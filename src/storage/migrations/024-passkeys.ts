import { sql, type Kysely } from 'kysely';

/**
 * Passkeys (issue 24; src/domain/factor.ts PasskeyFactor, docs/second-factors.md).
 *
 * A passkey is a row of `user_factors` (kind 'passkey'), so every listing and removal of factors
 * covers it; its WebAuthn columns are null for the other kinds, as the TOTP columns are for
 * passkeys. `credential_id` is unique across users (WebAuthn L3 §7.1 step 26: a credential ID
 * registered for another user is refused). `sign_count` is updated with `last_used_at` by one
 * conditional UPDATE (FactorStore.usePasskey, docs/decisions.md SA60).
 *
 * `webauthn_user_handles`: the user handle each user's passkeys carry (WebAuthn L3 §14.6.1: a
 * random opaque value, not the user id), made once per user and unique, so a discoverable
 * credential's handle finds its user (SA61).
 *
 * `passkey_challenges`: the challenges of ceremonies under way (SA64), by SHA-256; each bound to
 * its purpose and what it answers, taken once by a conditional DELETE, expiring soon; the cleanup
 * job deletes the expired. Additive: older instances never read the new columns or tables.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One column per ALTER: SQLite adds one at a time.
  for (const [name, type] of [
    ['credential_id', 'text'],
    ['public_key', 'text'],
    ['sign_count', 'bigint'],
    ['transports', 'text'],
    ['backup_eligible', 'integer'],
    ['backed_up', 'integer'],
    ['aaguid', 'text'],
  ] as const) {
    await db.schema.alterTable('user_factors').addColumn(name, type).execute();
  }
  // NULLs are distinct in a unique index on both databases: the other kinds do not collide.
  await sql`create unique index user_factors_credential_id on user_factors (credential_id)`.execute(db);

  await db.schema
    .createTable('webauthn_user_handles')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('handle', 'text', (c) => c.notNull().unique())
    .execute();

  await db.schema
    .createTable('passkey_challenges')
    .addColumn('challenge_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('binding', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('passkey_challenges_expires_at').on('passkey_challenges').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
