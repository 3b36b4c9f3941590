import type { Kysely } from 'kysely';

/**
 * Authorization policies (issue 13, item 1): a table of named policy documents (JSON text, with a
 * version every update raises, which keys the parsed-document cache), and the client's
 * `authorization_policy` as a typed column that references a policy by name.
 *
 * The reference is a foreign key with ON DELETE RESTRICT on both databases: PostgreSQL adds it in
 * place; SQLite allows ADD COLUMN with a REFERENCES clause when the column's default is NULL (its
 * ALTER TABLE documentation), and gatehouse runs SQLite with foreign_keys on. So a policy in use
 * cannot be deleted, and a client cannot be attached to a policy deleted at the same time: the
 * database decides, whichever instance writes (src/storage/ports.ts, PolicyStore).
 * Additive: every existing client gets null (no policy: everyone may use it, no extra claims).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('policies')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .alterTable('clients')
    .addColumn('authorization_policy', 'text', (c) => c.references('policies.name').onDelete('restrict'))
    .execute();
  // The "in use" check of a delete looks clients up by policy.
  await db.schema.createIndex('clients_authorization_policy').on('clients').column('authorization_policy').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
