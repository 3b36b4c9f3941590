import { sql, type Kysely } from 'kysely';

/**
 * Invitations (issue 25 items 4 and 7; docs/invitations.md; decisions AM74–AM77): one row per
 * invitation, kept after it ends so administrators see what happened to it. `token_hash` is the
 * SHA-256 of the link's token (a resend replaces it, so the old link dies). `email_key` is the
 * address lower-cased: at most one pending invitation per address (a partial unique index, so two
 * administrators inviting the same person at once make one). Accepting is one conditional UPDATE
 * (`WHERE status = 'pending' AND expires_at > now`), in the unit of work that makes the user.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('given_name', 'text')
    .addColumn('family_name', 'text')
    .addColumn('organization_id', 'text', (c) => c.references('organizations.id').onDelete('set null'))
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('locale', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('set null'))
    .execute();
  await db.schema.createIndex('invitations_pending_email').on('invitations').column('email_key').unique().where(sql.ref('status'), '=', 'pending').execute();
  await db.schema.createIndex('invitations_created').on('invitations').columns(['created_at', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
