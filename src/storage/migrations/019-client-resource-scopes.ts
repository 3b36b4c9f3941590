import type { Kysely } from 'kysely';

/**
 * The scope values resource servers declare (`resource_scopes`, docs/decisions.md RS1–RS6):
 * `client_resource_scopes` maps each declared value to the one resource server that declared it,
 * so a scope value names one audience. The primary key makes a value unique across clients in the
 * database itself: two declarations of one value racing on any number of instances cannot both
 * commit. The client store writes the rows in the unit of work that writes the client (its
 * `resource_scopes` metadata is the copy shown); deleting the client deletes its values. Additive:
 * no client declared any before, and an older instance ignores the table and the key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('client_resource_scopes')
    .addColumn('scope', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('client_resource_scopes_client_id').on('client_resource_scopes').column('client_id').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
