import type { Kysely } from 'kysely';

/**
 * Resource servers and their RFC 8707 resource indicators (docs/decisions.md, "Resource servers and
 * resource indicators"). `client_resource_uris` maps each registered URI to the one resource server
 * that registered it: the primary key makes a URI unique across clients in the database itself, so
 * two registrations of one URI racing on any number of instances cannot both commit. The client
 * store writes the rows in the unit of work that writes the client (its `resource_uris` metadata is
 * the copy shown); deleting the client deletes its URIs.
 *
 * Upgrade: a client that already served as a resource — named in another client's `aud`, or
 * registered with the old `--resource-server` flag (no grants at all) — becomes a resource server
 * (`resource_server: true` in its metadata), unless it is public (it could not authenticate at
 * introspection). So the identity API's client stays nameable in `aud`. Entries already stored in
 * `aud` keep working whatever they name (decision RI3). Additive otherwise: an older instance
 * ignores the table and the key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('client_resource_uris')
    .addColumn('uri', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('client_resource_uris_client_id').on('client_resource_uris').column('client_id').execute();

  const clients = db as unknown as Kysely<{ clients: { client_id: string; token_endpoint_auth_method: string | null; grant_types: string; metadata: string } }>;
  const rows = await clients.selectFrom('clients').select(['client_id', 'token_endpoint_auth_method', 'grant_types', 'metadata']).execute();
  const named = new Set<string>();
  for (const row of rows) {
    const aud = parse(row.metadata).aud;
    if (Array.isArray(aud)) for (const id of aud) if (typeof id === 'string') named.add(id);
  }
  for (const row of rows) {
    if (row.token_endpoint_auth_method === 'none') continue;
    const metadata = parse(row.metadata);
    if (metadata.resource_server !== undefined) continue;
    const noGrants = JSON.stringify(JSON.parse(row.grant_types)) === '[]';
    if (!named.has(row.client_id) && !noGrants) continue;
    await clients
      .updateTable('clients')
      .set({ metadata: JSON.stringify({ ...metadata, resource_server: true }) })
      .where('client_id', '=', row.client_id)
      .execute();
  }
}

function parse(metadata: string): Record<string, unknown> {
  const value: unknown = JSON.parse(metadata);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
