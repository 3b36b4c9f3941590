import type { Kysely } from 'kysely';

/**
 * Native clients (issue 22 item 2; docs/decisions.md F6). A loopback redirect URI now takes any
 * port (RFC 8252 §7.3) only for a client registered with `application_type: "native"` (OIDC
 * Registration §2). Clients registered before that have no `application_type`, so they would now
 * compare exactly. Upgrade: a client with an `http` loopback redirect URI written without a port
 * (`http://127.0.0.1/callback`) is a native app that picks its port when it runs — that URI could
 * only ever be used through the exception — so it becomes native (`application_type: "native"` in
 * its metadata) and keeps working. The console's own client never does: it is a web client of this
 * server. Nothing else changes; an older instance ignores the key (and kept the exception anyway).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const clients = db as unknown as Kysely<{ clients: { client_id: string; redirect_uris: string; metadata: string } }>;
  const rows = await clients.selectFrom('clients').select(['client_id', 'redirect_uris', 'metadata']).execute();
  for (const row of rows) {
    if (row.client_id === 'gatehouse-console') continue;
    const metadata = parse(row.metadata);
    if (metadata.application_type !== undefined) continue;
    const uris: unknown = JSON.parse(row.redirect_uris);
    if (!Array.isArray(uris) || !uris.some((uri) => typeof uri === 'string' && PORTLESS_LOOPBACK.test(uri))) continue;
    await clients
      .updateTable('clients')
      .set({ metadata: JSON.stringify({ ...metadata, application_type: 'native' }) })
      .where('client_id', '=', row.client_id)
      .execute();
  }
}

/** An http loopback URI whose host is followed by no port: by the path, the query, or the end. */
const PORTLESS_LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)([/?]|$)/;

function parse(metadata: string): Record<string, unknown> {
  const value: unknown = JSON.parse(metadata);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
